#!/usr/bin/env node
// The `urlbridge` command. Runs the built CLI (dist/server/cli.js); in a development checkout whose
// server/ sources are newer than that build (or with no build at all), runs server/cli.ts through tsx.
import { spawn } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const built = path.join(root, "dist", "server", "cli.js");
const sourceDir = path.join(root, "server");
const source = path.join(sourceDir, "cli.ts");

function newestSourceMtime(dir) {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSourceMtime(full));
    else if (entry.name.endsWith(".ts")) newest = Math.max(newest, fs.statSync(full).mtimeMs);
  }
  return newest;
}

function tsxLoader() {
  try {
    return createRequire(import.meta.url).resolve("tsx");
  } catch {
    return undefined;
  }
}

const hasSource = fs.existsSync(source);
const hasBuild = fs.existsSync(built);
const loader = hasSource ? tsxLoader() : undefined;
const useBuild = hasBuild && (!loader || fs.statSync(built).mtimeMs >= newestSourceMtime(sourceDir));

if (useBuild) {
  const { runCli } = await import(pathToFileURL(built).href);
  const code = await runCli(process.argv.slice(2));
  if (code !== 0) process.exitCode = code;
} else if (loader) {
  const child = spawn(process.execPath, ["--import", pathToFileURL(loader).href, source, ...process.argv.slice(2)], {
    stdio: "inherit",
  });
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => child.kill(signal));
  child.on("exit", (code, signal) => {
    if (signal) process.kill(process.pid, signal);
    else process.exit(code ?? 1);
  });
} else {
  process.stderr.write("urlbridge: not built; run `npm run build` first\n");
  process.exitCode = 1;
}
