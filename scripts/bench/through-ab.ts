// Two (or more) built bridges reading the same 16 MiB file through by 128 KiB pages, in turns (one whole
// read-through per build, then the bare floors, round after round), so that machine load falls on every build
// alike. Per build: the read-through's wall time (median over rounds) and the bridge's main-thread CPU per page
// (schedstat). Floors in the same rotation: as many bare GETs of 128 KiB, and as many GETs of one of the first
// build's pages, parsed as JSON by the client as ours are (large.ts's two floors). Each build's pages' content is
// checked against the file's bytes. Not a suite of `npm run bench`: a tool for an A/B of two builds (issue 34).
//   npx tsx scripts/bench/through-ab.ts <rounds> <dist/server/main.js>...   (main's build and this checkout's:
//   /work/main/dist/server/main.js dist/server/main.js; PROF=dir: each build runs with --cpu-prof into dir/<n>/)
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { giveToAgent, makeBenchDir, startBuildSession } from "./bridge.js";
import { mainThreadCpuNs } from "./harness.js";
import { startFloorServer, stopChild, type FloorServer } from "./http.js";
import { getJson, url, writeLog } from "./large.js";

const PAGE = 128 * 1024;
const SETTLE_MS = 2500;

interface Build {
  label: string;
  stop: () => Promise<void>;
  pid: number;
  base: string;
  wall: number[];
  cpuPerPage: number[];
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function startBuild(entry: string, projectDir: string, n: number): Promise<Build> {
  const { child, stateDir, bases } = await startBuildSession(
    entry,
    n,
    projectDir,
    { write: false, terminal: false },
    "through-ab-state",
  );
  return {
    label: entry,
    pid: child.pid!,
    base: bases.r,
    wall: [],
    cpuPerPage: [],
    stop: async () => {
      await stopChild(child);
      fs.rmSync(stateDir, { recursive: true, force: true });
    },
  };
}

/** Reads the file through; the pages' contents joined, and how many pages it took. */
async function readThrough(base: string): Promise<{ content: string; pages: number }> {
  const parts: string[] = [];
  let body = await getJson(
    url(base, "r", [
      ["path", "sixteen.log"],
      ["offset", 1],
      ["max", PAGE],
    ]),
  );
  let pages = 1;
  for (;;) {
    parts.push((body.files as Array<{ content: string }>)[0]!.content);
    if (typeof body.next !== "string") break;
    body = await getJson(body.next);
    pages++;
  }
  return { content: parts.join(""), pages };
}

async function main(): Promise<void> {
  const rounds = Number(process.argv[2] ?? 5);
  const entries = process.argv.slice(3);
  if (entries.length === 0) throw new Error("name at least one build's dist/server/main.js");
  const projectDir = makeBenchDir("through-ab-project");
  const file = path.join(projectDir, "sixteen.log");
  writeLog(file, 16 * 1024 * 1024);
  const expected = fs.readFileSync(file, "utf8");
  giveToAgent(projectDir);
  const builds: Build[] = [];
  const floors: FloorServer[] = [];
  const load = os.loadavg();
  try {
    for (const [n, entry] of entries.entries()) builds.push(await startBuild(entry, projectDir, n));
    await sleep(SETTLE_MS);
    let pages = 0;
    for (const build of builds) {
      const first = await readThrough(build.base);
      if (first.content !== expected) throw new Error(`${build.label}: the pages' content differs from the file`);
      pages = first.pages;
    }
    const pageBytes = Buffer.from(
      await (
        await fetch(
          url(builds[0]!.base, "r", [
            ["path", "sixteen.log"],
            ["offset", 1000],
            ["max", PAGE],
          ]),
        )
      ).arrayBuffer(),
    );
    const bare = await startFloorServer(Buffer.alloc(PAGE, "x"), "application/json; charset=utf-8");
    floors.push(bare);
    const same = await startFloorServer(pageBytes, "application/json; charset=utf-8");
    floors.push(same);
    const bareWall: number[] = [];
    const sameWall: number[] = [];
    for (let round = 0; round < rounds; round++) {
      for (const build of builds) {
        const cpu = mainThreadCpuNs(build.pid) ?? Number.NaN;
        const start = performance.now();
        const { pages: n } = await readThrough(build.base);
        build.wall.push(performance.now() - start);
        build.cpuPerPage.push(((mainThreadCpuNs(build.pid) ?? Number.NaN) - cpu) / 1e6 / n);
        await sleep(20);
      }
      let start = performance.now();
      for (let i = 0; i < pages; i++) await (await fetch(bare.url)).arrayBuffer();
      bareWall.push(performance.now() - start);
      await sleep(20);
      start = performance.now();
      for (let i = 0; i < pages; i++) await (await fetch(same.url)).json();
      sameWall.push(performance.now() - start);
      await sleep(20);
    }
    const floorBare = median(bareWall);
    const floorSame = median(sameWall);
    process.stdout.write(
      `${rounds} rounds of ${pages} pages; load ${load.map((l) => l.toFixed(2)).join(" ")} at the start, ${os.loadavg()[0]!.toFixed(2)} at the end\n` +
        `bare GETs of 128 KiB ${floorBare.toFixed(1)} ms; GETs of our page's ${pageBytes.length} B, JSON-parsed ${floorSame.toFixed(1)} ms\n`,
    );
    for (const build of builds) {
      const wall = median(build.wall);
      process.stdout.write(
        `${build.label}: ${wall.toFixed(1)} ms (${(wall / floorBare).toFixed(2)}× bare, ${(wall / floorSame).toFixed(2)}× same bytes), ` +
          `main-thread CPU ${median(build.cpuPerPage).toFixed(3)} ms/page; walls ${build.wall.map((w) => w.toFixed(0)).join(" ")}\n`,
      );
    }
  } finally {
    for (const build of builds) await build.stop();
    for (const floor of floors) await floor.close();
    fs.rmSync(projectDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
