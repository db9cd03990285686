// An A/B of the head-of-line scenario (head-of-line.ts) between two builds of the bridge, interleaved so both meet the
// same load on a shared machine: for each round, a fresh bridge from build A, then one from build B, each measured
// alone and beside the heavy session. Not a suite of `npm run bench`: a tool for saying whether a change moved it.
//   npx tsx scripts/bench/large-hol-ab.ts <entry A> [entry B] [rounds]   (entries: a build's dist/server/main.js;
//   B defaults to this checkout's build, rounds to 3)
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createControlPost, giveToAgent, makeBenchDir, spawnServer } from "./bridge.js";
import { measureHeadOfLine, type HeadOfLine } from "./head-of-line.js";
import { stopChild } from "./http.js";
import { writeLog } from "./large.js";

const SETTLE_MS = 2500;
const MAX_ROUNDS = 10;

async function measureBuild(entry: string, projectDir: string): Promise<HeadOfLine> {
  writeLog(path.join(projectDir, "ten.log"), 10 * 1000 * 1000);
  giveToAgent(projectDir);
  const stateDir = makeBenchDir("large-hol-ab-state");
  const { child, urls } = spawnServer(stateDir, {}, [], entry);
  try {
    const api = createControlPost((await urls).control);
    const project = await api("/api/projects", {
      name: "hol",
      root: projectDir,
      permissions: { write: true, terminal: false },
    });
    const bases = async () => {
      const session = await api("/api/sessions", { projectId: project.id });
      return ((await (await fetch(session.initUrl!)).json()) as { bases: { r: string; m: string } }).bases;
    };
    const heavy = await bases();
    const other = await bases();
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    return await measureHeadOfLine(heavy, other.r, child.pid);
  } finally {
    await stopChild(child);
    fs.rmSync(stateDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const [a, b = path.resolve("dist/server/main.js"), roundsArg = "3"] = process.argv.slice(2);
  const rounds = Number(roundsArg);
  if (!a || !Number.isInteger(rounds) || rounds < 1 || rounds > MAX_ROUNDS)
    throw new Error(`usage: large-hol-ab.ts <entry A> [entry B] [rounds 1..${MAX_ROUNDS}]`);
  const projectDir = makeBenchDir("large-hol-ab");
  fs.writeFileSync(path.join(projectDir, "small.txt"), "a small file read by another session\n".repeat(55));
  writeLog(path.join(projectDir, "sixteen.log"), 16 * 1024 * 1024);
  const f = (v: number) => v.toFixed(2);
  try {
    for (let round = 1; round <= rounds; round++)
      for (const [label, entry] of [
        ["A", a],
        ["B", b],
      ] as const) {
        const load = os.loadavg()[0]!.toFixed(2);
        const r = await measureBuild(path.resolve(entry), projectDir);
        process.stdout.write(
          `round ${round} ${label} (load ${load} -> ${os.loadavg()[0]!.toFixed(2)}): ${r.pages} pages, ${r.edits} edits; ` +
            `p50 ${f(r.beside.p50)} / ${f(r.alone.p50)} ms = ${f(r.beside.p50 / r.alone.p50)}x; ` +
            `p99 ${f(r.beside.p99)} / ${f(r.alone.p99)} ms = ${f(r.beside.p99 / r.alone.p99)}x` +
            (r.waitedForCore
              ? `; loop waited for a core ${f(r.waitedForCore.alone * 100)} % alone, ${f(r.waitedForCore.beside * 100)} % beside`
              : "") +
            "\n",
        );
      }
  } finally {
    fs.rmSync(projectDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
