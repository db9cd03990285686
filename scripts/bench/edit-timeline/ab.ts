// Interleaved A/B of /e between two builds (diagnostics, not a suite): both servers run at once and each round
// edits once through A, once through B (order alternating), on one keep-alive connection each, so machine load
// falls on both alike. `A=<dist/server/main.js> B=<…> N=1000 npx tsx scripts/bench/edit-timeline/ab.ts`.
import fs from "node:fs";
import { startEditServer, type EditServer } from "./edit-server.js";

const N = Number(process.env.N ?? 1000);
const WARMUP = 50;

interface Side {
  name: string;
  server: EditServer;
  child: EditServer["child"];
  one: (n: number) => Promise<number>;
}

async function startSide(name: string, entry: string): Promise<Side> {
  const server = await startEditServer(`ab-${name}`, { entry });
  const one = async (n: number) => {
    const s = performance.now();
    await server.edit(n);
    return performance.now() - s;
  };
  return { name, server, child: server.child, one };
}

const a = await startSide("A", process.env.A!);
const b = await startSide("B", process.env.B!);
for (let i = 0; i < WARMUP; i++) {
  await a.one(i);
  await b.one(i);
}
const times: Record<string, number[]> = { A: [], B: [] };
// The event loop's own CPU time (the main thread's schedstat run time, ns), which machine load does not inflate
// the way it does wall-clock latency.
const loopNs = (side: Side) =>
  Number(fs.readFileSync(`/proc/${side.child.pid}/task/${side.child.pid}/schedstat`, "utf8").split(" ")[0]);
const loop0 = { A: loopNs(a), B: loopNs(b) };
for (let i = WARMUP; i < WARMUP + N; i++) {
  const order = i % 2 === 0 ? [a, b] : [b, a];
  for (const side of order) times[side.name]!.push(await side.one(i));
}
const p = (v: number[], q: number) => [...v].sort((x, y) => x - y)[Math.floor(v.length * q)]!;
const pa = p(times.A!, 0.5),
  pb = p(times.B!, 0.5);
const loopA = (loopNs(a) - loop0.A) / N / 1000,
  loopB = (loopNs(b) - loop0.B) / N / 1000;
console.log(
  `N=${N} A p50 ${pa.toFixed(3)} p90 ${p(times.A!, 0.9).toFixed(3)} | B p50 ${pb.toFixed(3)} p90 ${p(times.B!, 0.9).toFixed(3)} | B/A ${(pb / pa).toFixed(3)}`,
);
console.log(
  `event-loop CPU per /e, µs: A ${loopA.toFixed(0)} | B ${loopB.toFixed(0)} | B/A ${(loopB / loopA).toFixed(3)}`,
);
for (const side of [a, b]) await side.server.close();
