// `npm run build:native`: compiles the sandbox launcher (native/urlbridge-sandbox.c and its parts in
// native/sandbox/) and the resident spawner that starts it (native/urlbridge-spawner.c) into dist/native/ with the
// system C compiler. Skips a binary newer than its sources and every header of native/ (close-fds.h, which both
// include, and the launcher's); on a machine without cc it says so and leaves the terminal to refuse or warn
// (URLBRIDGE_SANDBOX) instead of failing the whole build. Without the spawner, commands are spawned directly.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const native = path.join(root, "native");
/** Each program's sources: its own file, and for the launcher the parts in native/sandbox/. */
const PROGRAMS = {
  "urlbridge-sandbox": ["urlbridge-sandbox.c", ...filesIn("sandbox", ".c")],
  "urlbridge-spawner": ["urlbridge-spawner.c"],
};

/** The files of a folder under native/ that end in `suffix`, as paths relative to native/, in a stable order. */
function filesIn(folder, suffix) {
  return fs
    .readdirSync(path.join(native, folder))
    .filter((f) => f.endsWith(suffix))
    .sort()
    .map((f) => path.join(folder, f));
}

function buildOne(name, quiet) {
  const sources = PROGRAMS[name].map((f) => path.join(native, f));
  const output = path.join(root, "dist", "native", name);
  const headers = [...filesIn(".", ".h"), ...filesIn("sandbox", ".h")].map((f) => path.join(native, f));
  const newest = Math.max(...[...sources, ...headers].map((f) => fs.statSync(f).mtimeMs));
  if (fs.existsSync(output) && fs.statSync(output).mtimeMs >= newest) {
    if (!quiet) console.error(`urlbridge: build:native: dist/native/${name} is up to date`);
    return true;
  }
  fs.mkdirSync(path.dirname(output), { recursive: true });
  const cc = process.env.CC || "cc";
  const temp = `${output}.tmp-${process.pid}`;
  try {
    execFileSync(cc, ["-O2", "-Wall", "-Wextra", "-o", temp, ...sources], { stdio: "inherit" });
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
  return Object.keys(PROGRAMS)
    .map((name) => buildOne(name, quiet))
    .every(Boolean);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (!buildNative()) process.exitCode = process.env.URLBRIDGE_NATIVE_OPTIONAL === "1" ? 0 : 1;
}
