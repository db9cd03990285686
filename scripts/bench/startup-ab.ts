// Restarts of two or more builds of the server interleaved start by start (issue 34 item 7): for each, spawn to the
// first 200 from /api/health on an existing state dir, the CPU the process spent by then (all its threads and the
// main thread alone, from /proc/<pid>/task/*/schedstat), then one `/r` of a 2 KiB file sent as soon as health
// answered (a new connection, as an agent's first call after a restart would come) and its time and CPU. Builds
// are named `label=path/to/dist/server/main.js[,--node-option...]`; `floor` is a bare node:http server started by `node -e`.
//   npx tsx scripts/bench/startup-ab.ts [--rounds 15] main=/work/main/dist/server/main.js this=dist/server/main.js
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { createControlPost, makeBenchDir, OPERATOR_TOKEN } from "./bridge.js";
import { percentile } from "./harness.js";
import { stopChild } from "./http.js";
import { FLOOR_SOURCE, freePort, probe } from "./startup.js";
import { seededRandom } from "../../test/helpers/seeded-random.js";

const DEFAULT_ROUNDS = 15;
const PROBE_EVERY_MS = 2;
const START_TIMEOUT_MS = 20_000;
/** The file the first `/r` reads: 2 KiB, as the read targets' small file. */
const READ_FILE = "small.txt";

interface Build {
  label: string;
  /** The entry to run, or undefined for the floor. */
  entry: string | undefined;
  /** Node options before the entry (`label=entry,--flag,...`). */
  nodeArgs: string[];
  stateDir: string;
  projectDir: string;
  controlPort: number;
  dataPort: number;
  /** The session's read base, learnt at set-up; the capability outlives restarts. */
  readBase: string | undefined;
}

interface Sample {
  startMs: number;
  /** ms of CPU, all threads / the main thread, when health answered. */
  cpuMs: number;
  mainCpuMs: number;
  /** From health's answer to the first `/r`'s, and the CPU in between (all threads). */
  readMs: number | undefined;
  readCpuMs: number | undefined;
}

function threadsCpuMs(pid: number): { all: number; main: number } {
  const ns = (file: string) => Number(fs.readFileSync(file, "utf8").split(" ")[0]);
  let all = 0;
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      all += ns(`/proc/${pid}/task/${tid}/schedstat`);
    } catch {
      // A thread that ended between the listing and the read.
    }
  }
  return { all: all / 1e6, main: ns(`/proc/${pid}/schedstat`) / 1e6 };
}

function get(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false }, (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (body += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on("error", reject);
  });
}

function spawnBuild(build: Build): ChildProcess {
  const args = build.entry ? [...build.nodeArgs, build.entry] : ["-e", FLOOR_SOURCE];
  return spawn(process.execPath, args, {
    env: {
      ...process.env,
      URLBRIDGE_STATE_DIR: build.stateDir,
      URLBRIDGE_CONTROL_PORT: String(build.controlPort),
      URLBRIDGE_DATA_PORT: String(build.dataPort),
      URLBRIDGE_OPERATOR_TOKEN: OPERATOR_TOKEN,
      URLBRIDGE_LOG_LEVEL: "error",
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
}

async function untilHealthy(child: ChildProcess, port: number, started: number): Promise<void> {
  while (child.exitCode === null && performance.now() - started < START_TIMEOUT_MS) {
    if ((await probe(port)) === 200) return;
    await new Promise((resolve) => setTimeout(resolve, PROBE_EVERY_MS));
  }
  throw new Error(`pid ${child.pid} did not answer /api/health within ${START_TIMEOUT_MS} ms`);
}

/** One project with a 2 KiB file and one session; the first start also writes the build's code cache. */
async function setUp(build: Build): Promise<void> {
  if (!build.entry) return;
  fs.writeFileSync(path.join(build.projectDir, READ_FILE), `${"x".repeat(63)}\n`.repeat(32));
  const child = spawnBuild(build);
  try {
    await untilHealthy(child, build.controlPort, performance.now());
    const api = createControlPost(`http://127.0.0.1:${build.controlPort}`);
    const project = await api("/api/projects", {
      name: "ab",
      root: build.projectDir,
      permissions: { write: false, terminal: false },
    });
    const session = await api("/api/sessions", { projectId: project.id });
    const { bases } = (await (await fetch(session.initUrl!)).json()) as { bases: { r: string } };
    build.readBase = bases.r;
  } finally {
    await stopChild(child);
  }
}

async function restart(build: Build): Promise<Sample> {
  const started = performance.now();
  const child = spawnBuild(build);
  try {
    await untilHealthy(child, build.controlPort, started);
    const healthy = performance.now();
    const cpu = threadsCpuMs(child.pid!);
    let readMs: number | undefined;
    let readCpuMs: number | undefined;
    if (build.readBase) {
      const answer = await get(`${build.readBase}/r?path=${READ_FILE}`);
      readMs = performance.now() - healthy;
      readCpuMs = threadsCpuMs(child.pid!).all - cpu.all;
      if (answer.status !== 200 || !answer.body.includes('"ok":true'))
        throw new Error(`${build.label}: /r answered ${answer.status}: ${answer.body.slice(0, 200)}`);
    }
    return { startMs: healthy - started, cpuMs: cpu.all, mainCpuMs: cpu.main, readMs, readCpuMs };
  } finally {
    await stopChild(child);
  }
}

function row(label: string, samples: Sample[]): string {
  const p50 = (values: Array<number | undefined>) => {
    const defined = values.filter((v): v is number => v !== undefined).sort((a, b) => a - b);
    return defined.length === 0 ? "" : percentile(defined, 50).toFixed(0);
  };
  const starts = samples.map((s) => s.startMs).sort((a, b) => a - b);
  return [
    label,
    p50(starts),
    `${starts[0]!.toFixed(0)}–${starts.at(-1)!.toFixed(0)}`,
    p50(samples.map((s) => s.cpuMs)),
    p50(samples.map((s) => s.mainCpuMs)),
    p50(samples.map((s) => s.readMs)),
    p50(samples.map((s) => s.readCpuMs)),
  ].join(" | ");
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  let rounds = DEFAULT_ROUNDS;
  const specs: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--rounds") rounds = Number(args[++i]);
    else specs.push(args[i]!);
  }
  if (specs.length === 0) specs.push("main=/work/main/dist/server/main.js", "this=dist/server/main.js", "floor");
  const builds: Build[] = [];
  for (const spec of specs) {
    const [label, rest] = spec.split(/=(.*)/s) as [string, string | undefined];
    const [entry, ...nodeArgs] = rest?.split(",") ?? [];
    if (entry && !fs.existsSync(entry)) throw new Error(`${entry} is missing`);
    builds.push({
      label,
      entry: entry && path.resolve(entry),
      nodeArgs,
      stateDir: makeBenchDir(`ab-state-${label}`),
      projectDir: makeBenchDir(`ab-project-${label}`),
      controlPort: await freePort(),
      dataPort: await freePort(),
      readBase: undefined,
    });
  }
  const loadBefore = os.loadavg();
  const samples = new Map<string, Sample[]>(builds.map((b) => [b.label, []]));
  try {
    for (const build of builds) await setUp(build);
    const random = seededRandom(34);
    for (let round = 0; round < rounds; round++) {
      const order = [...builds].sort(() => random() - 0.5);
      for (const build of order) samples.get(build.label)!.push(await restart(build));
    }
  } finally {
    for (const build of builds) {
      fs.rmSync(build.stateDir, { recursive: true, force: true });
      fs.rmSync(build.projectDir, { recursive: true, force: true });
    }
  }
  const load = (l: number[]) => l.map((v) => v.toFixed(2)).join(" ");
  console.log(
    `${rounds} restarts each, in a shuffled order per round; load average ${load(loadBefore)} before, ${load(os.loadavg())} after`,
  );
  console.log(
    "build | start p50 ms | min–max | CPU p50 ms (all threads) | main thread | first /r after health p50 ms | its CPU",
  );
  for (const build of builds) console.log(row(build.label, samples.get(build.label)!));
}

await main();
