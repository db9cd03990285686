// Drives N sequential /e of a 2 KiB file against the built server (`npm run build:server` first), one keep-alive
// connection: `npx tsx scripts/bench/edit-timeline/drive.ts` with N=, and MARKS_OUT=<file> (the preload's
// timeline), PROF_DIR=<dir> (a --cpu-prof), PERF_OUT=<file> (perf record of the event loop's thread), or ENTRY=<another build's dist/server/main.js> to compare builds.
import fs from "node:fs";
import path from "node:path";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { createControlPost, makeBenchDir, OPERATOR_TOKEN } from "../bridge.js";
import { createBenchClient, stopChild } from "../http.js";
import { encodeQueryValue, encodeUrlText } from "../../../server/url-grammar/encode.js";

const N = Number(process.env.N ?? 1000);
const projectDir = makeBenchDir("project");
const file = path.join(projectDir, "edit.txt");
const head = "# edited by the bench\nvalue A\n";
const filler = `${"x".repeat(63)}\n`.repeat(32);
fs.writeFileSync(file, (head + filler).slice(0, 2047) + "\n");
if (process.getuid?.() === 0) for (const name of [".", ...fs.readdirSync(projectDir)]) fs.chownSync(path.join(projectDir, name), 1000, 1000);
const stateDir = makeBenchDir("state");
const child = spawn(process.execPath, [...(process.env.PERF_OUT ? ["--perf-basic-prof"] : []), ...(process.env.PROF_DIR ? ["--cpu-prof", `--cpu-prof-dir=${process.env.PROF_DIR}`, "--cpu-prof-interval=100"] : []), ...(process.env.MARKS_OUT ? ["--import", fileURLToPath(new URL("./preload.mjs", import.meta.url))] : []), process.env.ENTRY ?? fileURLToPath(new URL("../../../dist/server/main.js", import.meta.url))], {
  env: { ...process.env, URLBRIDGE_STATE_DIR: stateDir, URLBRIDGE_CONTROL_PORT: "0", URLBRIDGE_DATA_PORT: "0", URLBRIDGE_OPERATOR_TOKEN: OPERATOR_TOKEN, URLBRIDGE_LOG_LEVEL: "info" },
  stdio: ["ignore", "ignore", "pipe"],
});
const urls = new Promise<{ control: string }>((resolve) => { let t = ""; child.stderr!.on("data", (c: Buffer) => { t += c; const m = /control plane on (http:\/\/\S+)/.exec(t); if (m && /data plane on/.test(t)) resolve({ control: m[1]! }); }); });
const client = createBenchClient(1);
const { control } = await urls;
const api = createControlPost(control);
const project = await api("/api/projects", { name: "bench", root: projectDir, permissions: { write: true, terminal: true } });
const session = await api("/api/sessions", { projectId: project.id });
const bases = ((await (await fetch(session.initUrl!)).json()) as { bases: { r: string; m: string } }).bases;
let cur = "A";
const one = async (n: number) => {
  const next = cur === "A" ? "B" : "A";
  const u = `${bases.m}/e?path=edit.txt&old=${encodeQueryValue(`value ${cur}`)}&run=${n}&raw=${encodeUrlText(`value ${next}`)}`;
  const body = JSON.parse((await client.get(u)).toString("utf8"));
  if (!body.ok) throw new Error(JSON.stringify(body));
  cur = next;
};
for (let i = 0; i < 50; i++) await one(i);
let strace: ReturnType<typeof spawn> | undefined;
if (process.env.STRACE) {
  strace = spawn("strace", ["-f", "--seccomp-bpf", "-e", "trace=read,writev,fsync,rename,openat", "-ttt", "-T", "-o", process.env.STRACE, "-p", String(child.pid)], { stdio: "ignore" });
  await new Promise((r) => setTimeout(r, 1000));
}
let perf: ReturnType<typeof spawn> | undefined;
if (process.env.PERF_OUT) {
  // The event loop's thread alone (its tid is the pid), sampled with call graphs; JIT frames named by --perf-basic-prof.
  perf = spawn("perf", ["record", "-F", "4999", "-g", "-t", String(child.pid), "-o", process.env.PERF_OUT], { stdio: "ignore" });
  await new Promise((r) => setTimeout(r, 1000));
}
const t0 = performance.now();
const samples: number[] = [];
for (let i = 50; i < 50 + N; i++) { const s = performance.now(); await one(i); samples.push(performance.now() - s); }
const total = performance.now() - t0;
samples.sort((a, b) => a - b);
console.log(`N=${N} mean ${(total / N).toFixed(3)} ms p50 ${samples[Math.floor(N / 2)]!.toFixed(3)}`);
if (strace) { strace.kill("SIGINT"); await new Promise((r) => setTimeout(r, 500)); }
if (perf) { perf.kill("SIGINT"); await new Promise((r) => perf!.once("exit", r)); }
await stopChild(child);
fs.rmSync(stateDir, { recursive: true, force: true });
fs.rmSync(projectDir, { recursive: true, force: true });
