// Builds the control UI into dist/web, which the control plane serves. `vite --config web/vite.config.ts`
// runs a dev server that proxies /api to a control plane on its default port.
import { fileURLToPath } from "node:url";
import vue from "@vitejs/plugin-vue";
import { defineConfig } from "vite";

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));

export default defineConfig({
  root: here("."),
  base: "/",
  publicDir: here("public"),
  plugins: [vue()],
  build: {
    outDir: here("../dist/web"),
    emptyOutDir: true,
    // The polyfill would be an inline script, which our CSP forbids; every supported browser has modulepreload.
    modulePreload: { polyfill: false },
    chunkSizeWarningLimit: 300,
  },
  server: {
    proxy: { "/api": `http://127.0.0.1:${process.env.URLBRIDGE_CONTROL_PORT ?? "47433"}` },
  },
});
