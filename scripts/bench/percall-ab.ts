// Two (or more) built bridges serving the small calls of issue 34's targets in turns: a journaled /e of a 2 KiB file
// and a /r of a 2 KiB file. Each round takes every build once per call kind, in a seeded shuffled order, timed as a
// client calls (Node's fetch, the harness's untimed gap after each call); after the timed rounds, each build's
// main-thread CPU per call (schedstat) in blocks of back-to-back calls, builds in turns, so machine load falls on all
// alike. Not a suite of `npm run bench`: a tool for an A/B of two builds (issue 34).
//   npx tsx scripts/bench/percall-ab.ts <runs> <dist/server/main.js>...   (main's build and this checkout's:
//   /work/main/dist/server/main.js dist/server/main.js; PROF=dir: each build runs with --cpu-prof into dir/<n>/)
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { encodeQueryValue, encodeUrlText } from "../../server/url-grammar/encode.js";
import { giveToAgent, makeBenchDir, startBuildSession } from "./bridge.js";
import { writeFlipFile } from "./flip-file.js";
import { CLIENT_GAP_MS, measureAsClient, measureCpuInterleaved, type Stats } from "./harness.js";
import { fetchBody, stopChild } from "./http.js";

const WARMUP = 20;
/** Rounds of the CPU blocks (PERCALL_CPU_ROUNDS overrides: more rounds, less noise on a loaded machine). */
const CPU_ROUNDS = Number(process.env.PERCALL_CPU_ROUNDS ?? 6);
const CPU_BLOCK = 50;

interface Build {
  label: string;
  pid: number;
  edit: () => Promise<void>;
  read: () => Promise<void>;
  stop: () => Promise<void>;
}

function url(base: string, route: string, params: Array<[string, string | number]>, raw?: string): string {
  const parts = params.map(([k, v]) => `${k}=${encodeQueryValue(String(v))}`);
  if (raw !== undefined) parts.push(`raw=${encodeUrlText(raw)}`);
  return `${base}/${route}?${parts.join("&")}`;
}

async function getOk(target: string): Promise<void> {
  const text = (await fetchBody(target)).toString("utf8");
  if ((JSON.parse(text) as { ok?: unknown }).ok !== true) throw new Error(`call failed: ${text.slice(0, 300)}`);
}

async function startBuild(entry: string, n: number): Promise<Build> {
  const projectDir = makeBenchDir("percall-ab-project");
  writeFlipFile(path.join(projectDir, "edit.txt"));
  writeFlipFile(path.join(projectDir, "read.txt"));
  giveToAgent(projectDir);
  const { child, stateDir, bases } = await startBuildSession(
    entry,
    n,
    projectDir,
    { write: true, terminal: false },
    "percall-ab-state",
  );
  const m = bases.m!;
  let current = "A";
  let run = 0;
  return {
    label: entry,
    pid: child.pid!,
    edit: async () => {
      const next = current === "A" ? "B" : "A";
      await getOk(
        url(
          m,
          "e",
          [
            ["path", "edit.txt"],
            ["old", `value ${current}`],
            ["run", run++],
          ],
          `value ${next}`,
        ),
      );
      current = next;
    },
    read: () => getOk(url(bases.r, "r", [["path", "read.txt"]])),
    stop: async () => {
      await stopChild(child);
      fs.rmSync(stateDir, { recursive: true, force: true });
      fs.rmSync(projectDir, { recursive: true, force: true });
    },
  };
}

async function main(): Promise<void> {
  const runs = Number(process.argv[2] ?? 200);
  const entries = process.argv.slice(3);
  if (entries.length === 0) throw new Error("name at least one build's dist/server/main.js");
  const builds: Build[] = [];
  const load = os.loadavg();
  try {
    for (const [n, entry] of entries.entries()) builds.push(await startBuild(entry, n));
    const fns = builds.flatMap((b) => [b.edit, b.read]);
    const stats = await measureAsClient(runs, WARMUP, fns);
    const mid = os.loadavg();
    const cpu = await measureCpuInterleaved(
      CPU_ROUNDS,
      CPU_BLOCK,
      builds.flatMap((b) => [
        { pid: b.pid, fn: b.edit },
        { pid: b.pid, fn: b.read },
      ]),
    );
    const ms = (s: Stats) => `p50 ${s.p50.toFixed(3)} p99 ${s.p99.toFixed(3)} ms`;
    const us = (v: number | undefined) => (v === undefined ? "n/a" : `${v.toFixed(0)} µs`);
    process.stdout.write(
      `${runs} timed calls of each after ${WARMUP} warm-up rounds, ${CLIENT_GAP_MS} ms gap; CPU ${CPU_ROUNDS} rounds of ${CPU_BLOCK}; ` +
        `load ${load.map((l) => l.toFixed(2)).join(" ")} at the start, ${mid[0]!.toFixed(2)} after the timing, ${os.loadavg()[0]!.toFixed(2)} at the end\n`,
    );
    for (const [k, build] of builds.entries())
      process.stdout.write(
        `${build.label}\n  /e 2 KiB ${ms(stats[2 * k]!)}; main-thread CPU ${us(cpu[2 * k])}/call\n` +
          `  /r 2 KiB ${ms(stats[2 * k + 1]!)}; main-thread CPU ${us(cpu[2 * k + 1])}/call\n`,
      );
  } finally {
    for (const build of builds) await build.stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
