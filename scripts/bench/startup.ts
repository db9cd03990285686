// Start-up and memory of the built server, run as deployed (`node dist/server/main.js`, a fresh state dir per
// start): time from spawn to the first `/api/health` answer beside a floor (`node` starting a bare node:http
// server that answers the same probe), interleaved start by start; the modules loaded before that answer; and
// resident memory idle, with 16 sessions, and with every session's response cache (range snapshots) full.
import { spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { createControlPost, makeBenchDir, OPERATOR_TOKEN, spawnServer } from "./bridge.js";
import { percentile, type BenchResult, type Stats } from "./harness.js";
import { stopChild } from "./http.js";
import { MAX_SNAPSHOT_BYTES_PER_SESSION } from "../../server/url-grammar/range-replay.js";

const STARTS = 9;
const PROBE_EVERY_MS = 2;
const START_TIMEOUT_MS = 20_000;
const SESSIONS = 16;
/** Reads per session: more than MAX_SNAPSHOTS_PER_SESSION (96) of ~24 KiB answers, so every cache is at its bound. */
const FILL_READS = 120;
const FILL_FILES = 40;
const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const SERVER_ENTRY = path.join(REPO_ROOT, "dist", "server", "main.js");
/** The floor: Node starting a bare server that answers every request (what any Node server pays to start). */
export const FLOOR_SOURCE = `require("node:http").createServer((q, s) => s.end("{}")).listen(Number(process.env.URLBRIDGE_CONTROL_PORT), "127.0.0.1")`;
/** Counts what the process loads: ES modules through a load hook, CommonJS ones from the require cache at exit. */
const COUNT_HOOKS = `import fs from "node:fs";
export async function load(url, context, next) { fs.appendFileSync(process.env.URLBRIDGE_BENCH_MODULES, url + "\\n"); return next(url, context); }`;
const countPreload = (
  hooks: string,
) => `import { register, createRequire } from "node:module"; import fs from "node:fs";
register(${JSON.stringify(`file://${hooks}`)});
process.on("exit", () => { const cache = createRequire(import.meta.url).cache; fs.appendFileSync(process.env.URLBRIDGE_BENCH_MODULES, Object.keys(cache).map((f) => "file://" + f + "\\n").join("")); });`;

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = http.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** One GET /api/health on a new connection: its status, or 0 when nothing answered. */
export function probe(port: number): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get({ host: "127.0.0.1", port, path: "/api/health", agent: false }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", () => resolve(0));
  });
}

/** utime + stime of a process so far, in ms (clock ticks, 10 ms resolution on Linux). */
function cpuMs(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

interface StartSample {
  ms: number;
  cpuMs: number;
}

/** Spawns args on a free control port and probes /api/health until it answers 200; the child is stopped after. */
async function timeStart(args: string[], env: Record<string, string>): Promise<StartSample> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, args, {
    env: {
      ...process.env,
      URLBRIDGE_CONTROL_PORT: String(port),
      URLBRIDGE_DATA_PORT: "0",
      URLBRIDGE_OPERATOR_TOKEN: OPERATOR_TOKEN,
      URLBRIDGE_LOG_LEVEL: "error",
      ...env,
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  let exited = false;
  child.once("exit", () => (exited = true));
  try {
    while (!exited && performance.now() - started < START_TIMEOUT_MS) {
      if ((await probe(port)) === 200) return { ms: performance.now() - started, cpuMs: cpuMs(child.pid!) };
      await new Promise((resolve) => setTimeout(resolve, PROBE_EVERY_MS));
    }
    throw new Error(
      `${args.join(" ")} did not answer /api/health within ${START_TIMEOUT_MS} ms${exited ? " (it exited)" : ""}`,
    );
  } finally {
    await stopChild(child);
  }
}

function statsOf(values: number[]): Stats & { min: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    n: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    mean: sorted.reduce((a, b) => a + b, 0) / sorted.length,
    min: sorted[0]!,
    max: sorted.at(-1)!,
  };
}

/** First starts (a fresh state dir: database, key and credential created), restarts (the same state dir again) and the floor, in turns. */
async function measureStarts() {
  const first: StartSample[] = [];
  const restart: StartSample[] = [];
  const floor: StartSample[] = [];
  const kept = makeBenchDir("restart-state");
  try {
    await timeStart([SERVER_ENTRY], { URLBRIDGE_STATE_DIR: kept });
    for (let i = 0; i < STARTS; i++) {
      const stateDir = makeBenchDir("start-state");
      try {
        first.push(await timeStart([SERVER_ENTRY], { URLBRIDGE_STATE_DIR: stateDir }));
      } finally {
        fs.rmSync(stateDir, { recursive: true, force: true });
      }
      restart.push(await timeStart([SERVER_ENTRY], { URLBRIDGE_STATE_DIR: kept }));
      floor.push(await timeStart(["-e", FLOOR_SOURCE], {}));
    }
  } finally {
    fs.rmSync(kept, { recursive: true, force: true });
  }
  const ms = (samples: StartSample[]) => statsOf(samples.map((s) => s.ms));
  const cpu = (samples: StartSample[]) => statsOf(samples.map((s) => s.cpuMs));
  return {
    bridge: ms(first),
    bridgeCpu: cpu(first),
    restart: ms(restart),
    restartCpu: cpu(restart),
    floor: ms(floor),
    floorCpu: cpu(floor),
  };
}

/** Modules the bridge has loaded once /api/health answers, by package (ours, node: built-ins, each dependency). */
async function countModules(): Promise<{ total: number; byPackage: Array<[string, number]> }> {
  const stateDir = makeBenchDir("modules-state");
  const list = path.join(stateDir, "modules.txt");
  const hooks = path.join(stateDir, "count-hooks.mjs");
  const preload = path.join(stateDir, "count-modules.mjs");
  fs.writeFileSync(hooks, COUNT_HOOKS);
  fs.writeFileSync(preload, countPreload(hooks));
  try {
    await timeStart(["--import", preload, SERVER_ENTRY], {
      URLBRIDGE_STATE_DIR: stateDir,
      URLBRIDGE_BENCH_MODULES: list,
    });
    const urls = [
      ...new Set(
        fs
          .readFileSync(list, "utf8")
          .split("\n")
          .filter((u) => u && u !== `file://${preload}` && u !== `file://${hooks}`),
      ),
    ];
    const counts = new Map<string, number>();
    for (const url of urls) {
      const pkg =
        /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1] ??
        (url.startsWith("node:") ? "node: built-ins" : "urlbridge (dist/server)");
      counts.set(pkg, (counts.get(pkg) ?? 0) + 1);
    }
    return { total: urls.length, byPackage: [...counts].sort((a, b) => b[1] - a[1]) };
  } finally {
    fs.rmSync(stateDir, { recursive: true, force: true });
  }
}

interface MemorySample {
  rss: number;
  anon: number;
  file: number;
}

/** VmRSS and its anonymous / file-backed parts (the node binary's own pages are file-backed), in MiB. */
function memoryOf(pid: number): MemorySample {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? Number.NaN) / 1024;
  return { rss: kb("VmRSS"), anon: kb("RssAnon"), file: kb("RssFile") };
}

async function measureMemory() {
  const projectDir = makeBenchDir("memory-project");
  // 300 lines of 80 bytes: each /r answer is one full 24 KiB page (MAX_READ_BYTES) plus its JSON.
  for (let i = 0; i < FILL_FILES; i++)
    fs.writeFileSync(
      path.join(projectDir, `f${i}.txt`),
      `line ${String(i).padStart(2, "0")} ${"y".repeat(71)}\n`.repeat(300),
    );
  const stateDir = makeBenchDir("memory-state");
  const { child, urls } = spawnServer(stateDir, {});
  try {
    const { control } = await urls;
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const idle = memoryOf(child.pid!);
    const api = createControlPost(control);
    const project = await api("/api/projects", {
      name: "memory",
      root: projectDir,
      permissions: { write: false, terminal: false },
    });
    const bases: string[] = [];
    for (let s = 0; s < SESSIONS; s++) {
      const session = await api("/api/sessions", { projectId: project.id });
      bases.push(((await (await fetch(session.initUrl!)).json()) as { bases: { r: string } }).bases.r);
    }
    const sessions = memoryOf(child.pid!);
    let answered = 0;
    for (let round = 0; round < FILL_READS; round++) {
      await Promise.all(
        bases.map(async (base) => {
          const res = await fetch(`${base}/r?path=f${round % FILL_FILES}.txt`);
          answered += (await res.arrayBuffer()).byteLength;
        }),
      );
    }
    const full = memoryOf(child.pid!);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const settled = memoryOf(child.pid!);
    return { idle, sessions, full, settled, answeredMiB: answered / 1048576 };
  } finally {
    await stopChild(child);
    fs.rmSync(stateDir, { recursive: true, force: true });
    fs.rmSync(projectDir, { recursive: true, force: true });
  }
}

export async function runStartupBench(): Promise<BenchResult> {
  if (!fs.existsSync(SERVER_ENTRY))
    throw new Error("dist/server is missing: run `npm run build:server` (npm run bench does)");
  const starts = await measureStarts();
  const modules = await countModules();
  const memory = await measureMemory();
  const cacheBoundMiB = (SESSIONS * MAX_SNAPSHOT_BYTES_PER_SESSION) / 1048576;
  const f1 = (n: number) => n.toFixed(1);
  const f0 = (n: number) => n.toFixed(0);
  const spread = (s: { min: number; max: number }) => `${f0(s.min)}–${f0(s.max)}`;
  const startTarget = starts.bridge.p50 <= 200 ? "met" : "**not met**";
  const restartTarget = starts.restart.p50 <= 200 ? "met" : "**not met**";
  const mem = (label: string, m: MemorySample) =>
    `| ${label} | ${f1(m.rss)} | ${f1(m.anon)} | ${f1(m.file)} | ${f1(m.rss - memory.idle.rss)} |`;
  const overIdle = memory.full.rss - memory.idle.rss;
  const markdown = [
    "### Start-up and memory",
    "",
    `Measured ${new Date().toISOString().slice(0, 10)} on ${os.cpus().length} × ${os.cpus()[0]?.model.trim() ?? "unknown CPU"}, Node ${process.version}, load average ${os.loadavg()[0]!.toFixed(1)} at the end.`,
    `The built server (\`node dist/server/main.js\`: the vite/rolldown bundle \`npm run build:server\` writes), a fresh state dir per start`,
    `(so every start creates its database, key and operator credential). Start: spawn to the first 200 from \`/api/health\`,`,
    `probed every ${PROBE_EVERY_MS} ms on a new connection, ${STARTS} rounds of a first start, a restart and the floor in turns (\`node -e\` starting a bare node:http server`,
    `that answers the same probe). CPU: the child's user + system time when it answered (10 ms ticks).`,
    "",
    "| start | p50 ms | min–max ms | CPU p50 ms | target |",
    "|---|---|---|---|---|",
    `| floor: \`node -e\` bare node:http (n=${starts.floor.n}) | ${f0(starts.floor.p50)} | ${spread(starts.floor)} | ${f0(starts.floorCpu.p50)} | |`,
    `| urlbridge first start to first \`/api/health\` (fresh state dir, n=${starts.bridge.n}) | ${f0(starts.bridge.p50)} | ${spread(starts.bridge)} | ${f0(starts.bridgeCpu.p50)} | ≤ 200 ms ${startTarget} (${(starts.bridge.p50 / starts.floor.p50).toFixed(2)}× the floor) |`,
    `| urlbridge restart to first \`/api/health\` (existing state dir, n=${starts.restart.n}) | ${f0(starts.restart.p50)} | ${spread(starts.restart)} | ${f0(starts.restartCpu.p50)} | ≤ 200 ms ${restartTarget} (${(starts.restart.p50 / starts.floor.p50).toFixed(2)}× the floor) |`,
    "",
    `Modules loaded before the first answer: ${modules.total} (${modules.byPackage.map(([p, n]) => `${p} ${n}`).join(", ")}).`,
    "",
    `Memory: one bridge, one project, ${SESSIONS} sessions, then ${FILL_READS} \`/r\` reads per session of 24 KiB pages (${f1(memory.answeredMiB)} MiB answered),`,
    `more than the ${96} snapshots or ${MAX_SNAPSHOT_BYTES_PER_SESSION / 1048576} MiB each session's range-replay cache keeps, so every cache is at its bound`,
    `(${SESSIONS} × ${MAX_SNAPSHOT_BYTES_PER_SESSION / 1048576} MiB = ${cacheBoundMiB} MiB). MiB from /proc/<pid>/status; file-backed pages are mostly the node binary's own code.`,
    "",
    "| state | RSS | anonymous | file-backed | RSS over idle |",
    "|---|---|---|---|---|",
    mem("idle (1 s after listening)", memory.idle),
    mem(`${SESSIONS} sessions, caches empty`, memory.sessions),
    mem(`${SESSIONS} sessions, caches full`, memory.full),
    mem("the same, 2 s later", memory.settled),
    "",
    `Full caches cost ${f1(overIdle)} MiB of RSS over idle against the ${cacheBoundMiB} MiB cache bound: ` +
      `${overIdle <= cacheBoundMiB + 64 ? "within" : "**over**"} the bound + 64 MiB; RSS ${f1(memory.full.rss)} MiB against the bound + 64 MiB = ${cacheBoundMiB + 64} MiB ` +
      `${memory.full.rss <= cacheBoundMiB + 64 ? "(met)" : "(**not met** as an absolute figure)"}.`,
  ].join("\n");
  const ms = (v: number): Stats => ({ n: 1, p50: v, p99: v, mean: v });
  return {
    suite: "startup",
    markdown,
    figures: {
      start: starts.bridge,
      restart: starts.restart,
      startFloor: starts.floor,
      rssIdle: ms(memory.idle.rss),
      rssFull: ms(memory.full.rss),
    },
  };
}
