// The kernel's read alone, in a fresh process: runTool(read) of one 2 KiB file through the real containment walk,
// timed per call over the first `calls` (the window a bench of a fresh bridge measures) and then over as many more,
// beside the same system calls the walk and the read make (openat, readlink, statx, pread64, close) issued bare.
// Not a suite of `npm run bench`: a tool for finding the next cut. Wall time per call (median, mean) and the
// process's CPU time over each window.
//   npx tsx scripts/bench/kernel-read-profile.ts [calls=500]      (COLD=1: the first window only, e.g. under
//   node --import tsx --cpu-prof --cpu-prof-interval=25; GAP_US=n: sleep n µs before each call)
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { readTool } from "../../server/kernel/read/read.js";
import { runTool } from "../../server/tool/run-tool.js";
import { SessionState } from "../../server/kernel/tool/session-state.js";
import type { ToolContext } from "../../server/kernel/tool/definition.js";
import { O_PATH } from "../../server/sandbox/fd-walk.js";

const calls = Number(process.argv[2] ?? 500);
const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "urlbridge-kernel-read-")));
fs.writeFileSync(path.join(root, "read.txt"), `${"x".repeat(63)}\n`.repeat(32));
const ctx: ToolContext = {
  project: { id: "p", name: "p", root, permissions: { write: false, terminal: false, web: false } },
  session: { id: "s", name: "s", generation: 1 },
  state: new SessionState(),
  urls: {
    to: (base, route, params) => `/${base}/${route}?${params.map(([k, v]) => `${k}=${v}`).join("&")}`,
    repair: () => undefined,
  },
  signal: new AbortController().signal,
};
const log = { info() {}, warn() {}, error() {}, debug() {} } as never;

/** GAP_US=n: the thread sleeps n µs before each call, as a server waits on its socket between requests. */
const GAP_MS = Number(process.env.GAP_US ?? 0) / 1000;
const sleeper = new Int32Array(new SharedArrayBuffer(4));

/** Each call timed on its own: the median is what a call costs when nothing preempts it, the mean what it costs. */
function timed(label: string, n: number, body: () => void): void {
  const each = new Float64Array(n);
  const cpu = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    if (GAP_MS > 0) Atomics.wait(sleeper, 0, 0, GAP_MS);
    const start = process.hrtime.bigint();
    body();
    each[i] = Number(process.hrtime.bigint() - start) / 1e3;
  }
  const used = process.cpuUsage(cpu);
  const mean = each.reduce((a, b) => a + b, 0) / n;
  const median = [...each].sort((a, b) => a - b)[Math.floor(n / 2)]!;
  process.stdout.write(
    `${label.padEnd(40)} median ${median.toFixed(1).padStart(6)} µs  mean ${mean.toFixed(1).padStart(6)} µs  process CPU ${((used.user + used.system) / n).toFixed(1).padStart(6)} µs${GAP_MS > 0 ? " (gaps included)" : ""}\n`,
  );
}

const read = () => {
  const outcome = runTool(readTool, { path: ["read.txt"] }, ctx, { log });
  if ("then" in outcome || outcome.body.ok !== true) throw new Error("the read failed");
};
const { O_NOFOLLOW, O_DIRECTORY, O_RDONLY, O_NONBLOCK, O_NOCTTY } = fs.constants;
const buffer = Buffer.allocUnsafe(4096);
/** The nine system calls one read of a file at the top of the root makes (strace of the bridge), bare. */
const syscalls = () => {
  const rootFd = fs.openSync(root, O_PATH | O_NOFOLLOW | O_DIRECTORY);
  if (fs.readlinkSync(`/proc/self/fd/${rootFd}`) !== root) throw new Error("root moved");
  const pathFd = fs.openSync(`/proc/self/fd/${rootFd}/read.txt`, O_PATH | O_NOFOLLOW);
  const size = fs.fstatSync(pathFd).size;
  const fd = fs.openSync(`/proc/self/fd/${pathFd}`, O_RDONLY | O_NONBLOCK | O_NOCTTY);
  fs.readSync(fd, buffer, 0, size, 0);
  fs.closeSync(fd);
  fs.closeSync(pathFd);
  fs.closeSync(rootFd);
};

function main(): void {
  timed(`kernel read, calls 1-${calls} (cold)`, calls, read);
  // COLD=1: the cold window alone (for a --cpu-prof of it).
  if (process.env.COLD) return;
  timed(`kernel read, calls ${calls + 1}-${2 * calls}`, calls, read);
  timed(`kernel read, ${5 * calls} more (warm)`, 5 * calls, read);
  timed(`its 9 system calls bare, ${calls}`, calls, syscalls);
  timed(`kernel read, ${calls} more (warm)`, calls, read);
  timed(`its 9 system calls bare, ${calls} more`, calls, syscalls);
}

try {
  main();
} finally {
  fs.rmSync(root, { recursive: true, force: true });
}
