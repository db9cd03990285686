// `npm start` runs the built server; build first when dist/ is missing or older than the sources.
import { execSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { buildNative } from "./build-native.mjs";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const entry = path.join(root, "dist", "server", "main.js");
const web = path.join(root, "dist", "web", "index.html");

function newestMtime(dir) {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(full) : fs.statSync(full).mtimeMs);
  }
  return newest;
}

const stale =
  !fs.existsSync(entry) ||
  !fs.existsSync(web) ||
  fs.statSync(entry).mtimeMs < newestMtime(path.join(root, "server")) ||
  fs.statSync(web).mtimeMs < newestMtime(path.join(root, "web"));
if (stale) {
  console.error("urlbridge: building before start (npm run build)");
  execSync("npm run build", { cwd: root, stdio: "inherit" });
}
// The sandbox launcher has its own freshness check (npm run build covers it when the rest was stale).
if (!stale) buildNative({ quiet: true });
