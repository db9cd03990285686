// Interleaved A/B of /e between two builds (diagnostics, not a suite): both servers run at once and each round
// edits once through A, once through B (order alternating), on one keep-alive connection each, so machine load
// falls on both alike. `A=<dist/server/main.js> B=<…> N=1000 npx tsx scripts/bench/edit-timeline/ab.ts`.
import fs from "node:fs";
import path from "node:path";
import { spawn, type ChildProcess } from "node:child_process";
import { createControlPost, makeBenchDir, OPERATOR_TOKEN } from "../bridge.js";
import { createBenchClient, stopChild } from "../http.js";
import { encodeQueryValue, encodeUrlText } from "../../../server/url-grammar/encode.js";

const N = Number(process.env.N ?? 1000);
const WARMUP = 50;

interface Side {
  name: string;
  child: ChildProcess;
  dirs: string[];
  one: (n: number) => Promise<number>;
}

async function startSide(name: string, entry: string): Promise<Side> {
  const projectDir = makeBenchDir(`ab-${name}-project`);
  const file = path.join(projectDir, "edit.txt");
  fs.writeFileSync(file, ("# edited by the bench\nvalue A\n" + `${"x".repeat(63)}\n`.repeat(32)).slice(0, 2047) + "\n");
  if (process.getuid?.() === 0) for (const n of [".", ...fs.readdirSync(projectDir)]) fs.chownSync(path.join(projectDir, n), 1000, 1000);
  const stateDir = makeBenchDir(`ab-${name}-state`);
  const child = spawn(process.execPath, [entry], {
    env: { ...process.env, URLBRIDGE_STATE_DIR: stateDir, URLBRIDGE_CONTROL_PORT: "0", URLBRIDGE_DATA_PORT: "0", URLBRIDGE_OPERATOR_TOKEN: OPERATOR_TOKEN, URLBRIDGE_LOG_LEVEL: "info" },
    stdio: ["ignore", "ignore", "pipe"],
  });
  const control = await new Promise<string>((resolve) => {
    let t = "";
    child.stderr!.on("data", (c: Buffer) => {
      t += c;
      const m = /control plane on (http:\/\/\S+)/.exec(t);
      if (m && /data plane on/.test(t)) resolve(m[1]!);
    });
  });
  const api = createControlPost(control);
  const project = await api("/api/projects", { name: "bench", root: projectDir, permissions: { write: true, terminal: false } });
  const session = await api("/api/sessions", { projectId: project.id });
  const bases = ((await (await fetch(session.initUrl!)).json()) as { bases: { m: string } }).bases;
  const client = createBenchClient(1);
  let cur = "A";
  const one = async (n: number) => {
    const next = cur === "A" ? "B" : "A";
    const u = `${bases.m}/e?path=edit.txt&old=${encodeQueryValue(`value ${cur}`)}&run=${n}&raw=${encodeUrlText(`value ${next}`)}`;
    const s = performance.now();
    const body = JSON.parse((await client.get(u)).toString("utf8"));
    const took = performance.now() - s;
    if (!body.ok) throw new Error(JSON.stringify(body));
    cur = next;
    return took;
  };
  return { name, child, dirs: [projectDir, stateDir], one };
}

const a = await startSide("A", process.env.A!);
const b = await startSide("B", process.env.B!);
for (let i = 0; i < WARMUP; i++) { await a.one(i); await b.one(i); }
const times: Record<string, number[]> = { A: [], B: [] };
// The event loop's own CPU time (the main thread's schedstat run time, ns), which machine load does not inflate
// the way it does wall-clock latency.
const loopNs = (side: Side) => Number(fs.readFileSync(`/proc/${side.child.pid}/task/${side.child.pid}/schedstat`, "utf8").split(" ")[0]);
const loop0 = { A: loopNs(a), B: loopNs(b) };
for (let i = WARMUP; i < WARMUP + N; i++) {
  const order = i % 2 === 0 ? [a, b] : [b, a];
  for (const side of order) times[side.name]!.push(await side.one(i));
}
const p = (v: number[], q: number) => [...v].sort((x, y) => x - y)[Math.floor(v.length * q)]!;
const pa = p(times.A!, 0.5), pb = p(times.B!, 0.5);
const loopA = (loopNs(a) - loop0.A) / N / 1000, loopB = (loopNs(b) - loop0.B) / N / 1000;
console.log(`N=${N} A p50 ${pa.toFixed(3)} p90 ${p(times.A!, 0.9).toFixed(3)} | B p50 ${pb.toFixed(3)} p90 ${p(times.B!, 0.9).toFixed(3)} | B/A ${(pb / pa).toFixed(3)}`);
console.log(`event-loop CPU per /e, µs: A ${loopA.toFixed(0)} | B ${loopB.toFixed(0)} | B/A ${(loopB / loopA).toFixed(3)}`);
for (const side of [a, b]) {
  await stopChild(side.child);
  for (const d of side.dirs) fs.rmSync(d, { recursive: true, force: true });
}
