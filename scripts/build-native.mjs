// `npm run build:native`: compiles the sandbox launcher (native/urlbridge-sandbox.c) and the resident spawner
// that starts it (native/urlbridge-spawner.c) into dist/native/ with the system C compiler. Skips a binary newer
// than its source and the headers beside it (close-fds.h, which both include); on a machine without cc it says so and leaves the terminal to refuse or warn
// (URLBRIDGE_SANDBOX) instead of failing the whole build. Without the spawner, commands are spawned directly.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const PROGRAMS = ["urlbridge-sandbox", "urlbridge-spawner"];

function buildOne(name, quiet) {
  const source = path.join(root, "native", `${name}.c`);
  const output = path.join(root, "dist", "native", name);
  const headers = fs
    .readdirSync(path.join(root, "native"))
    .filter((f) => f.endsWith(".h"))
    .map((f) => path.join(root, "native", f));
  const newest = Math.max(...[source, ...headers].map((f) => fs.statSync(f).mtimeMs));
  if (fs.existsSync(output) && fs.statSync(output).mtimeMs >= newest) {
    if (!quiet) console.error(`urlbridge: build:native: dist/native/${name} is up to date`);
    return true;
  }
  fs.mkdirSync(path.dirname(output), { recursive: true });
  const cc = process.env.CC || "cc";
  const temp = `${output}.tmp-${process.pid}`;
  try {
    execFileSync(cc, ["-O2", "-Wall", "-Wextra", "-o", temp, source], { stdio: "inherit" });
  } catch (error) {
    fs.rmSync(temp, { force: true });
    console.error(
      `urlbridge: build:native failed (${cc}: ${error.message}); install a C compiler (apt-get install gcc) and rerun npm run build:native`,
    );
    return false;
  }
  fs.renameSync(temp, output);
  if (!quiet) console.error(`urlbridge: build:native: built dist/native/${name}`);
  return true;
}

export function buildNative({ quiet = false } = {}) {
  if (process.platform !== "linux") {
    if (!quiet) console.error("urlbridge: build:native skipped: the sandbox launcher is Linux-only (Landlock)");
    return false;
  }
  // Both are tried: a launcher without the spawner still confines commands (the bridge then forks per command).
  return PROGRAMS.map((name) => buildOne(name, quiet)).every(Boolean);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (!buildNative()) process.exitCode = process.env.URLBRIDGE_NATIVE_OPTIONAL === "1" ? 0 : 1;
}
