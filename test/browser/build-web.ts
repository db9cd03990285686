// Builds the control UI into dist/web when it is missing or older than its sources, so browser tests
// always exercise the UI as committed (vite's programmatic build, no shell).
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "vite";

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const WEB_SOURCES = [path.join(REPO_ROOT, "web"), path.join(REPO_ROOT, "server", "control")];
const BUILT_INDEX = path.join(REPO_ROOT, "dist", "web", "index.html");

function newestMtime(target: string): number {
  const stat = fs.statSync(target);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = 0;
  for (const entry of fs.readdirSync(target)) newest = Math.max(newest, newestMtime(path.join(target, entry)));
  return newest;
}

export async function ensureWebBuilt(): Promise<void> {
  const builtAt = fs.existsSync(BUILT_INDEX) ? fs.statSync(BUILT_INDEX).mtimeMs : 0;
  if (builtAt >= Math.max(...WEB_SOURCES.map(newestMtime))) return;
  await build({ configFile: path.join(REPO_ROOT, "web", "vite.config.ts"), logLevel: "warn" });
}
