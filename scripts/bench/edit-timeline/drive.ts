// Drives N sequential /e of a 2 KiB file against the built server (`npm run build:server` first), one keep-alive
// connection: `npx tsx scripts/bench/edit-timeline/drive.ts` with N=, and MARKS_OUT=<file> (the preload's
// timeline), PROF_DIR=<dir> (a --cpu-prof), PERF_OUT=<file> (perf record of the event loop's thread), or ENTRY=<another build's dist/server/main.js> to compare builds.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { startEditServer } from "./edit-server.js";

const N = Number(process.env.N ?? 1000);
const server = await startEditServer("timeline", {
  ...(process.env.ENTRY ? { entry: process.env.ENTRY } : {}),
  nodeArgs: [
    ...(process.env.PERF_OUT ? ["--perf-basic-prof"] : []),
    ...(process.env.PROF_DIR
      ? ["--cpu-prof", `--cpu-prof-dir=${process.env.PROF_DIR}`, "--cpu-prof-interval=100"]
      : []),
    ...(process.env.MARKS_OUT ? ["--import", fileURLToPath(new URL("./preload.mjs", import.meta.url))] : []),
  ],
  terminal: true,
});
const { child } = server;
const one = (n: number) => server.edit(n);
for (let i = 0; i < 50; i++) await one(i);
let strace: ReturnType<typeof spawn> | undefined;
if (process.env.STRACE) {
  strace = spawn(
    "strace",
    [
      "-f",
      "--seccomp-bpf",
      "-e",
      "trace=read,writev,fsync,rename,openat",
      "-ttt",
      "-T",
      "-o",
      process.env.STRACE,
      "-p",
      String(child.pid),
    ],
    { stdio: "ignore" },
  );
  await new Promise((r) => setTimeout(r, 1000));
}
let perf: ReturnType<typeof spawn> | undefined;
if (process.env.PERF_OUT) {
  // The event loop's thread alone (its tid is the pid), sampled with call graphs; JIT frames named by --perf-basic-prof.
  perf = spawn("perf", ["record", "-F", "4999", "-g", "-t", String(child.pid), "-o", process.env.PERF_OUT], {
    stdio: "ignore",
  });
  await new Promise((r) => setTimeout(r, 1000));
}
const t0 = performance.now();
const samples: number[] = [];
for (let i = 50; i < 50 + N; i++) {
  const s = performance.now();
  await one(i);
  samples.push(performance.now() - s);
}
const total = performance.now() - t0;
samples.sort((a, b) => a - b);
console.log(`N=${N} mean ${(total / N).toFixed(3)} ms p50 ${samples[Math.floor(N / 2)]!.toFixed(3)}`);
if (strace) {
  strace.kill("SIGINT");
  await new Promise((r) => setTimeout(r, 500));
}
if (perf) {
  perf.kill("SIGINT");
  await new Promise((r) => perf!.once("exit", r));
}
await server.close();
