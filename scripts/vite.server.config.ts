// Builds the server for running (`npm run build:server`): vite build --ssr (rolldown) bundles server/main.ts and
// server/cli.ts with zod, Koa and the MCP SDK into dist/server/ as a few CommonJS files (the two entries, the
// chunks they share, the MCP endpoint's chunk that loads on the first MCP POST, and server/code-cache.ts, which
// the entries install first so the other chunks compile from V8's cached bytecode), so start-up reads a handful
// of files instead of several hundred (docs/PERFORMANCE.md, "Start-up and memory"). The files sit directly in dist/server/,
// where the code's own paths (../../dist/native, the package root) expect them. Native addons and the packages
// imported lazily for rare work (typescript for /o, dockerode for the container sandbox) load from node_modules.
import { fileURLToPath } from "node:url";
import { defineConfig, type Plugin } from "vite";

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));

/** Loaded from node_modules at run time: native addons (SQLite, the PTY), and packages only rare calls import. */
const EXTERNAL = ["better-sqlite3", "typescript", "dockerode", "@lydell/node-pty", "@xterm/headless"];

/**
 * mime-types builds its extension and type tables from mime-db (~190 KB of JSON) as soon as it is required, and
 * Koa requires it (directly and through type-is and accepts) when it loads: ~13 ms of start-up CPU for tables
 * that only a lookup by extension reads (`ctx.type = "json"`, `ctx.is("json")`). Each `require("mime-types")`
 * gets the same API from a wrapper that requires the real copy (the importer's own version) on first use.
 */
function lazyMimeTypes(): Plugin {
  const PREFIX = "\0lazy-mime-types:";
  return {
    name: "urlbridge:lazy-mime-types",
    enforce: "pre",
    async resolveId(source, importer, options) {
      if (source !== "mime-types" || importer?.startsWith(PREFIX)) return null;
      const real = await this.resolve(source, importer, { ...options, skipSelf: true });
      return real ? PREFIX + real.id : null;
    },
    load(id) {
      if (!id.startsWith(PREFIX)) return null;
      return `let real;
const load = () => (real ??= require(${JSON.stringify(id.slice(PREFIX.length))}));
module.exports = {
  charset: (type) => load().charset(type),
  charsets: { lookup: (type) => load().charsets.lookup(type) },
  contentType: (str) => load().contentType(str),
  extension: (type) => load().extension(type),
  lookup: (path) => load().lookup(path),
  get extensions() { return load().extensions; },
  get types() { return load().types; },
  get _extensionConflicts() { return load()._extensionConflicts; },
};
`;
    },
  };
}

/** Entries that install the code cache before requiring the chunks they share. */
const CACHED_ENTRIES = new Set(["main", "cli"]);

/** Marks dist/server/ as CommonJS inside the package's "type": "module". */
function commonJsFolder(): Plugin {
  return {
    name: "urlbridge:commonjs-folder",
    generateBundle() {
      this.emitFile({ type: "asset", fileName: "package.json", source: `${JSON.stringify({ type: "commonjs" })}\n` });
    },
  };
}

export default defineConfig({
  logLevel: "warn",
  json: { namedExports: false, stringify: true },
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
      input: {
        main: here("../server/main.ts"),
        cli: here("../server/cli.ts"),
        "code-cache": here("../server/code-cache.ts"),
        "outline-worker": here("../server/kernel/read/outline-worker.ts"),
        "nearest-worker": here("../server/mutation/files/nearest-worker.ts"),
        "edit-worker": here("../server/mutation/files/edit-worker.ts"),
        "store/wal-checkpoint-worker": here("../server/store/wal-checkpoint-worker.ts"),
      },
      output: {
        // CommonJS (dist/server/package.json says so), because Node 20 compiles CommonJS through vm.Script, whose
        // cachedData the entries use for every other chunk (server/code-cache.ts) before they require it.
        format: "cjs",
        entryFileNames: "[name].js",
        chunkFileNames: "[name]-[hash].js",
        // import() of the externals (typescript, dockerode: CommonJS packages) as require: V8 drops the import
        // callback of a script compiled from cachedData on Node 20, so a cached chunk must not call import().
        dynamicImportInCjs: false,
        // All-ASCII chunks: one non-ASCII character (in a string, or in a JSDoc comment, which the output kept) made
        // Node read the whole ~1.8 MB bridge chunk into a two-byte string, ~8 ms of UTF-8 decoding at every start and
        // twice the memory; strings and regular expressions escape theirs, JSDoc stays in the sources (issue 34).
        charset: "ascii",
        comments: { legal: true, annotation: true, jsdoc: false },
        intro: (chunk) =>
          CACHED_ENTRIES.has(chunk.name) ? 'require("./code-cache.js").installCodeCache({ dir: __dirname });' : "",
      },
      onLog(level, log, handler) {
        // depd (under Koa's http-assert) builds wrappers with eval on purpose; nothing to act on.
        if (log.code === "EVAL" && log.id?.includes("node_modules")) return;
        handler(level, log);
      },
    },
  },
  plugins: [lazyMimeTypes(), commonJsFolder()],
  ssr: { target: "node", noExternal: true, external: EXTERNAL },
});
