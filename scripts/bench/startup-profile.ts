// Where a restart's main-thread CPU goes before the first /api/health answer (issue 34): restarts a build on an
// existing state dir under `node --cpu-prof`, stops it once health answered, cuts each profile at the first
// sample inside the control plane's operatorGate (the health answer) and sums the samples before it over every
// restart: self time by function, by file, and the inclusive time of the stages named on the command line.
//   npx tsx scripts/bench/startup-profile.ts [--restarts 10] [--top 40] [--entry dist/server/main.js] [--keep dir]
//   [stage ...]
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { makeBenchDir, OPERATOR_TOKEN } from "./bridge.js";
import type { Profile, ProfileNode } from "./cpu-profile.js";
import { stopChild } from "./http.js";
import { freePort, probe } from "./startup.js";

const PROBE_EVERY_MS = 2;
const START_TIMEOUT_MS = 20_000;
/** The control plane's middleware that answers /api/health (server/control/app.ts): the profile ends there. */
const HEALTH_FRAME = "operatorGate";

interface Totals {
  byFunction: Map<string, number>;
  byFile: Map<string, number>;
  inclusive: Map<string, number>;
  total: number;
}

function add(map: Map<string, number>, key: string, us: number): void {
  map.set(key, (map.get(key) ?? 0) + us);
}

/** Adds one profile's samples before the health answer to the totals. */
function accumulate(profile: Profile, stages: string[], totals: Totals): void {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const stack = (id: number) => {
    const frames: ProfileNode[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) frames.push(byId.get(at)!);
    return frames;
  };
  for (let i = 0; i < profile.samples.length; i++) {
    const frames = stack(profile.samples[i]!);
    if (frames.some((f) => f.callFrame.functionName === HEALTH_FRAME)) return;
    const us = profile.timeDeltas[i + 1] ?? 0;
    const { functionName, url, lineNumber } = frames[0]!.callFrame;
    if (functionName === "(idle)") continue;
    const where = url.replace(/^.*node_modules\//, "").replace(/^file:\/\/.*\/dist\//, "dist/");
    totals.total += us;
    add(totals.byFunction, `${functionName || "(anonymous)"} ${where}:${lineNumber + 1}`, us);
    add(totals.byFile, where.replace(/-[\w-]{8}\.js$/, ".js") || functionName, us);
    const seen = new Set<string>();
    for (const frame of frames) {
      const name = frame.callFrame.functionName;
      if (stages.includes(name) && !seen.has(name)) {
        seen.add(name);
        add(totals.inclusive, name, us);
      }
    }
  }
}

async function profiledRestart(entry: string, stateDir: string, profileDir: string): Promise<void> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, ["--cpu-prof", `--cpu-prof-dir=${profileDir}`, entry], {
    env: {
      ...process.env,
      URLBRIDGE_STATE_DIR: stateDir,
      URLBRIDGE_CONTROL_PORT: String(port),
      URLBRIDGE_DATA_PORT: "0",
      URLBRIDGE_OPERATOR_TOKEN: OPERATOR_TOKEN,
      URLBRIDGE_LOG_LEVEL: "error",
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  try {
    while ((await probe(port)) !== 200) {
      if (child.exitCode !== null || performance.now() - started > START_TIMEOUT_MS)
        throw new Error(`${entry} did not answer /api/health`);
      await new Promise((resolve) => setTimeout(resolve, PROBE_EVERY_MS));
    }
  } finally {
    await stopChild(child);
  }
}

function table(map: Map<string, number>, restarts: number, total: number, top: number): string {
  return [...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([key, us]) => {
      const ms = (us / 1000 / restarts).toFixed(1).padStart(7);
      return `${ms} ms ${((100 * us) / total).toFixed(1).padStart(5)}%  ${key}`;
    })
    .join("\n");
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  let restarts = 10;
  let top = 40;
  let entry = "dist/server/main.js";
  let keep: string | undefined;
  const stages: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--restarts") restarts = Number(args[++i]);
    else if (args[i] === "--top") top = Number(args[++i]);
    else if (args[i] === "--entry") entry = args[++i]!;
    else if (args[i] === "--keep") keep = args[++i]!;
    else stages.push(args[i]!);
  }
  entry = path.resolve(entry);
  const stateDir = makeBenchDir("profile-state");
  const profileDir = makeBenchDir("profile-out");
  const loadBefore = os.loadavg();
  const totals: Totals = { byFunction: new Map(), byFile: new Map(), inclusive: new Map(), total: 0 };
  try {
    // The first start creates the state dir (and, after a build, the code cache); it is not counted.
    await profiledRestart(entry, stateDir, makeBenchDir("profile-first"));
    for (let i = 0; i < restarts; i++) {
      await profiledRestart(entry, stateDir, profileDir);
      // CPU.<date>.<time>.<pid>.<thread id>.<seq>.cpuprofile: thread 0 is the main thread; workers write their own.
      for (const name of fs.readdirSync(profileDir)) {
        const file = path.join(profileDir, name);
        if (name.split(".")[4] !== "0") {
          fs.rmSync(file);
          continue;
        }
        accumulate(JSON.parse(fs.readFileSync(file, "utf8")) as Profile, stages, totals);
        if (keep) fs.renameSync(file, path.join(keep, `restart-${i}.cpuprofile`));
        else fs.rmSync(file);
      }
    }
  } finally {
    fs.rmSync(stateDir, { recursive: true, force: true });
    fs.rmSync(profileDir, { recursive: true, force: true });
  }
  const load = (l: number[]) => l.map((v) => v.toFixed(2)).join(" ");
  console.log(`${entry}: ${restarts} restarts; load average ${load(loadBefore)} before, ${load(os.loadavg())} after`);
  console.log(
    `main thread sampled before the first health answer: ${(totals.total / 1000 / restarts).toFixed(1)} ms a start`,
  );
  if (totals.inclusive.size > 0)
    console.log(`\nstages (inclusive)\n${table(totals.inclusive, restarts, totals.total, top)}`);
  console.log(`\nby file\n${table(totals.byFile, restarts, totals.total, 15)}`);
  console.log(`\nby function (self)\n${table(totals.byFunction, restarts, totals.total, top)}`);
}

await main();
