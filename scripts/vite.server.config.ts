// Builds the server for running (`npm run build:server`): vite build --ssr (rolldown) bundles server/main.ts and
// server/cli.ts with zod, Koa and the MCP SDK into dist/server/ as a few ES modules (the two entries, the chunk
// they share, and the MCP endpoint's chunk that loads on the first MCP POST), so start-up reads a handful of files
// instead of several hundred (docs/PERFORMANCE.md, "Start-up and memory"). The files sit directly in dist/server/,
// where the code's own paths (../../dist/native, the package root) expect them. Native addons and the packages
// imported lazily for rare work (typescript for /o, dockerode for the container sandbox) load from node_modules.
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));

/** Loaded from node_modules at run time: a native addon, and large packages only rare calls import. */
const EXTERNAL = ["better-sqlite3", "typescript", "dockerode"];

export default defineConfig({
  logLevel: "warn",
  build: {
    ssr: true,
    outDir: here("../dist/server"),
    emptyOutDir: true,
    target: "node20",
    minify: false,
    sourcemap: true,
    reportCompressedSize: false,
    rollupOptions: {
      // Worker threads' programs are entries of their own (server/kernel/worker/worker-entry.ts finds them here).
      input: { main: here("../server/main.ts"), cli: here("../server/cli.ts"), "outline-worker": here("../server/kernel/read/outline-worker.ts") },
      output: { format: "es", entryFileNames: "[name].js", chunkFileNames: "[name]-[hash].js" },
      onLog(level, log, handler) {
        // depd (under Koa's http-assert) builds wrappers with eval on purpose; nothing to act on.
        if (log.code === "EVAL" && log.id?.includes("node_modules")) return;
        handler(level, log);
      },
    },
  },
  ssr: { target: "node", noExternal: true, external: EXTERNAL },
});
