// Terminal and search benchmarks, each against a floor measured in the same run: `/x echo hi` against a spawn
// of `/bin/sh -c 'echo hi'` from a process padded to the bridge's size (exec-floor.mjs), and `/g` over a
// tree holding a file over 8 MiB against plain multi-threaded `rg` over the same tree. Calls are timed as a client
// makes them (harness.ts measureAsClient: Node's fetch, one at a time, in turns, an untimed gap after each); each
// figure is the median of the rounds' p50s, with their spread.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { encodeQueryValue, encodeUrlText } from "../../server/url-grammar/encode.js";
import { createControlPost, makeBenchDir, startBenchBridge, type BenchBridge } from "./bridge.js";
import {
  CLIENT_GAP_MS,
  describeClientMethod,
  measureAsClient,
  measureCpuInterleaved,
  type BenchResult,
  type Stats,
} from "./harness.js";
import { FETCH_CLIENT, fetchBody, firstLine, stopChild } from "./http.js";

const ROUNDS = 3;
const EXEC_RUNS = 100;
const EXEC_WARMUP = 10;
const SEARCH_RUNS = 15;
const SEARCH_WARMUP = 2;
/** The grown-bridge phase: 16 sessions whose range-replay caches are filled, as in the startup suite's memory figure. */
const FULL_SESSIONS = 16;
const FULL_READS = 120;
const FULL_FILES = 40;
const FULL_RUNS = 40;
const STAT_UNDER_X_RUNS = 150;
/** Main-thread CPU per /x: rounds of blocks of sequential calls, each bridge in turn. */
const CPU_ROUNDS = 4;
const CPU_BLOCK = 25;
const FLOOR_SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), "exec-floor.mjs");

function url(base: string, route: string, params: Array<[string, string | number]>, raw?: string): string {
  const parts = params.map(([k, v]) => `${k}=${encodeQueryValue(String(v))}`);
  if (raw !== undefined) parts.push(`raw=${encodeUrlText(raw)}`);
  return `${base}/${route}?${parts.join("&")}`;
}

async function getJson(target: string): Promise<Record<string, unknown>> {
  const body = JSON.parse((await fetchBody(target)).toString("utf8")) as Record<string, unknown>;
  if (body.ok !== true) throw new Error(`bench request failed: ${JSON.stringify(body).slice(0, 300)}`);
  return body;
}

function residentMiB(pid: number): number {
  const line = fs
    .readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("VmRSS:"));
  return Math.round(Number(line?.split(/\s+/)[1] ?? 0) / 1024);
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** The median of the rounds' p50s, with the lowest and highest p50 ("3.10 (2.95–3.40)"). */
interface Spread {
  median: number;
  low: number;
  high: number;
}

function spreadOf(values: number[]): Spread {
  return { median: median(values), low: Math.min(...values), high: Math.max(...values) };
}

const cpuText = (us: number | undefined) => (us === undefined ? "n/a (no schedstat)" : `${Math.round(us)} µs`);

const show = (s: Spread) => `${s.median.toFixed(2)} (${s.low.toFixed(2)}–${s.high.toFixed(2)})`;

interface ExecFigures {
  floor: Spread;
  floorSpawn: Spread;
  x: Spread;
  xRun: Spread;
  /** /x on a second bridge with URLBRIDGE_SPAWNER=off: the bridge forks the launcher itself. */
  xDirect: Spread;
  directRatio: Spread;
  /** Main-thread (event-loop) CPU per /x, µs: through the spawner, and forked by the bridge. */
  cpu: { spawner: number | undefined; direct: number | undefined };
  stat: Spread;
  bridgeMiB: number;
  ratio: Spread;
}

/**
 * Grows a bridge the way agents do: FULL_SESSIONS sessions on its project, each reading more 24 KiB pages than
 * its response cache keeps (every cache at its bound). Returns the bridge's resident MiB after.
 */
async function growBridge(bridge: BenchBridge): Promise<{ miB: number; otherSession: string }> {
  const api = createControlPost(bridge.control);
  // The bench's own session and FULL_SESSIONS - 1 more (16 is the bridge's limit of enabled sessions).
  const bases: string[] = [bridge.bases.r];
  for (let i = 1; i < FULL_SESSIONS; i++) {
    const session = await api("/api/sessions", { projectId: bridge.projectId });
    bases.push(((await (await fetch(session.initUrl!)).json()) as { bases: { r: string } }).bases.r);
  }
  for (let round = 0; round < FULL_READS; round++) {
    await Promise.all(
      bases.map(async (base) => (await fetch(`${base}/r?path=fill/f${round % FULL_FILES}.txt`)).arrayBuffer()),
    );
  }
  return { miB: residentMiB(bridge.pid), otherSession: bases[1]! };
}

interface GrownFigures {
  spawnerMiB: number;
  directMiB: number;
  /** /t stat in another session while /x runs back to back: p50 and p99, spawner and spawner off. */
  statUnderX: { spawner: Stats; direct: Stats };
  floor: Spread;
  x: Spread;
  xDirect: Spread;
  cpu: { spawner: number | undefined; direct: number | undefined };
}

/** /x on both bridges after they have grown, against a floor padded to the grown size; fewer runs per round. */
/**
 * Reads of one session, timed as a client calls, while another session of the same bridge runs `/x echo hi` back to
 * back (a load, not a client: no gap).
 */
async function statWhileExecuting(readBase: string, execBase: string): Promise<Stats> {
  let running = true;
  let n = 0;
  const loop = (async () => {
    while (running)
      await getJson(url(execBase, "x", [["run", `busy${n++}-${execBase.length}-${Date.now()}`]], "echo hi"));
  })();
  try {
    const [stat] = await measureAsClient(STAT_UNDER_X_RUNS, EXEC_WARMUP, [
      () => getJson(url(readBase, "t", [["path", "floor.txt"]])),
    ]);
    return stat!;
  } finally {
    running = false;
    await loop;
  }
}

async function benchGrown(
  bridge: BenchBridge,
  directBridge: BenchBridge,
  spawnerSide: { miB: number; otherSession: string },
  directSide: { miB: number; otherSession: string },
): Promise<GrownFigures> {
  const spawnerMiB = spawnerSide.miB;
  const directMiB = directSide.miB;
  const floorChild = spawn(process.execPath, [FLOOR_SCRIPT, String(Math.max(spawnerMiB, directMiB))], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  try {
    const floorUrl = await firstLine(floorChild);
    let n = 0;
    const echo = async (base: string) => {
      const body = await getJson(url(base, "x", [["run", `grown${n++}`]], "echo hi"));
      if (body.stdout !== "hi\n") throw new Error(`/x echo hi answered ${JSON.stringify(body).slice(0, 200)}`);
    };
    const x = () => echo(bridge.bases.m!);
    const xDirect = () => echo(directBridge.bases.m!);
    const floor = () => getJson(floorUrl);
    const rounds: Stats[][] = [];
    for (let round = 0; round < ROUNDS; round++)
      rounds.push(await measureAsClient(FULL_RUNS, EXEC_WARMUP, [floor, x, xDirect]));
    const [spawnerCpu, directCpu] = await measureCpuInterleaved(CPU_ROUNDS, CPU_BLOCK, [
      { pid: bridge.pid, fn: x },
      { pid: directBridge.pid, fn: xDirect },
    ]);
    const under: { spawner: Stats[]; direct: Stats[] } = { spawner: [], direct: [] };
    for (let round = 0; round < ROUNDS; round++) {
      under.spawner.push(await statWhileExecuting(spawnerSide.otherSession, bridge.bases.m!));
      under.direct.push(await statWhileExecuting(directSide.otherSession, directBridge.bases.m!));
    }
    const medianStats = (list: Stats[]): Stats => ({
      n: list[0]!.n,
      p50: median(list.map((x) => x.p50)),
      p99: median(list.map((x) => x.p99)),
      mean: median(list.map((x) => x.mean)),
    });
    return {
      spawnerMiB,
      directMiB,
      statUnderX: { spawner: medianStats(under.spawner), direct: medianStats(under.direct) },
      floor: spreadOf(rounds.map((r) => r[0]!.p50)),
      x: spreadOf(rounds.map((r) => r[1]!.p50)),
      xDirect: spreadOf(rounds.map((r) => r[2]!.p50)),
      cpu: { spawner: spawnerCpu, direct: directCpu },
    };
  } finally {
    await stopChild(floorChild);
  }
}

async function benchExec(
  bridge: BenchBridge,
  directBridge: BenchBridge,
  floorUrl: string,
  bridgeMiB: number,
): Promise<ExecFigures> {
  const bases = bridge.bases as { r: string; m: string };
  let n = 0;
  const runs: number[] = [];
  const echo = async (base: string) => {
    const body = await getJson(url(base, "x", [["run", n++]], "echo hi"));
    if (body.stdout !== "hi\n") throw new Error(`/x echo hi answered ${JSON.stringify(body).slice(0, 200)}`);
    return body;
  };
  const x = async () => runs.push((await echo(bases.m)).durationMs as number);
  const xDirect = () => echo(directBridge.bases.m!);
  const stat = () => getJson(url(bases.r, "t", [["path", "floor.txt"]]));
  const spawns: number[] = [];
  const floor = async () => {
    const body = await getJson(floorUrl);
    if (body.stdout !== "hi\n") throw new Error(`the floor answered ${JSON.stringify(body)}`);
    spawns.push(body.spawnMs as number);
  };
  const rounds: Array<{ stats: Stats[]; floorSpawn: number; xRun: number }> = [];
  for (let round = 0; round < ROUNDS; round++) {
    spawns.length = 0;
    runs.length = 0;
    const stats = await measureAsClient(EXEC_RUNS, EXEC_WARMUP, [floor, x, stat, xDirect]);
    rounds.push({ stats, floorSpawn: median(spawns), xRun: median(runs) });
  }
  const [spawnerCpu, directCpu] = await measureCpuInterleaved(CPU_ROUNDS, CPU_BLOCK, [
    { pid: bridge.pid, fn: x },
    { pid: directBridge.pid, fn: xDirect },
  ]);
  return {
    floor: spreadOf(rounds.map((r) => r.stats[0]!.p50)),
    floorSpawn: spreadOf(rounds.map((r) => r.floorSpawn)),
    x: spreadOf(rounds.map((r) => r.stats[1]!.p50)),
    xRun: spreadOf(rounds.map((r) => r.xRun)),
    stat: spreadOf(rounds.map((r) => r.stats[2]!.p50)),
    ratio: spreadOf(rounds.map((r) => r.stats[1]!.p50 / r.stats[0]!.p50)),
    xDirect: spreadOf(rounds.map((r) => r.stats[3]!.p50)),
    directRatio: spreadOf(rounds.map((r) => r.stats[3]!.p50 / r.stats[0]!.p50)),
    cpu: { spawner: spawnerCpu, direct: directCpu },
    bridgeMiB,
  };
}

/** A run of rg with the given arguments in `cwd`; resolves with its stdout. */
function runRg(args: string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn("rg", args, { cwd, stdio: ["ignore", "pipe", "ignore"] });
    const chunks: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0 || code === 1
        ? resolve(Buffer.concat(chunks).toString("utf8"))
        : reject(new Error(`rg exited ${code}`)),
    );
  });
}

const SEARCH_TREE = "typescript";
const SEARCH_PATTERN = "TODO";

interface SearchFigures {
  floor: Spread;
  direct: Spread;
  sorted: Spread;
  g: Spread;
  ratio: Spread;
  rgCount: number;
  gCount: number;
  truncated: boolean;
  treeMiB: number;
  largestMiB: number;
}

/** The TypeScript package (23 MB, lib/typescript.js 9.1 MB) copied into the project: the tree the issue measured. */
function copySearchTree(projectDir: string): { treeMiB: number; largestMiB: number } {
  const source = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../node_modules/typescript");
  const target = path.join(projectDir, SEARCH_TREE);
  fs.cpSync(source, target, { recursive: true });
  let total = 0;
  let largest = 0;
  for (const entry of fs.readdirSync(target, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const size = fs.statSync(path.join(entry.parentPath, entry.name)).size;
    total += size;
    largest = Math.max(largest, size);
  }
  return { treeMiB: total / 1048576, largestMiB: largest / 1048576 };
}

async function benchSearch(bridge: BenchBridge, projectDir: string, floorUrl: string): Promise<SearchFigures> {
  const tree = copySearchTree(projectDir);
  const cwd = path.join(projectDir, SEARCH_TREE);
  const countLines = (text: string) => text.split("\n").filter((l) => l.length > 0).length;
  let rgCount = 0;
  let gCount = 0;
  let truncated = false;
  // Plain rg as a user runs it (multi-threaded, default output), spawned by the floor process of the bridge's size over the same HTTP.
  const floor = async () =>
    (rgCount = (
      await getJson(`${floorUrl}rg?cwd=${encodeURIComponent(cwd)}&pattern=${encodeURIComponent(SEARCH_PATTERN)}`)
    ).lines as number);
  // The same, spawned by the bench process itself, no HTTP.
  const direct = async () => countLines(await runRg(["--no-config", "-F", SEARCH_PATTERN, "."], cwd));
  // What /g ran before: one thread, in path order, JSON.
  const sorted = () => runRg(["--no-config", "--json", "--sort=path", "-F", SEARCH_PATTERN, "."], cwd);
  const g = async () => {
    const body = await getJson(url(bridge.bases.r, "g", [["path", SEARCH_TREE]], SEARCH_PATTERN));
    gCount = body.matchedLines as number;
    truncated = body.truncated as boolean;
  };
  const rounds: Stats[][] = [];
  for (let round = 0; round < ROUNDS; round++)
    rounds.push(await measureAsClient(SEARCH_RUNS, SEARCH_WARMUP, [floor, direct, sorted, g]));
  return {
    floor: spreadOf(rounds.map((r) => r[0]!.p50)),
    direct: spreadOf(rounds.map((r) => r[1]!.p50)),
    sorted: spreadOf(rounds.map((r) => r[2]!.p50)),
    g: spreadOf(rounds.map((r) => r[3]!.p50)),
    ratio: spreadOf(rounds.map((r) => r[3]!.p50 / r[0]!.p50)),
    rgCount,
    gCount,
    truncated,
    ...tree,
  };
}

export async function runExecSearchBench(): Promise<BenchResult> {
  const projectDir = makeBenchDir("exec");
  fs.writeFileSync(path.join(projectDir, "floor.txt"), "floor\n");
  // 300 lines of 80 bytes: each /r answer of the grown phase is one full 24 KiB page.
  fs.mkdirSync(path.join(projectDir, "fill"));
  for (let i = 0; i < FULL_FILES; i++)
    fs.writeFileSync(
      path.join(projectDir, "fill", `f${i}.txt`),
      `line ${String(i).padStart(2, "0")} ${"y".repeat(71)}\n`.repeat(300),
    );
  // As root the sandboxed terminal runs as the project's owner (uid 1000 for a root-owned folder): give it the folder.
  if (process.getuid?.() === 0)
    for (const name of [".", ...fs.readdirSync(projectDir)]) fs.chownSync(path.join(projectDir, name), 1000, 1000);
  const bridge = await startBenchBridge(projectDir, { permissions: { write: true, terminal: true } });
  const load = os.loadavg();
  const directBridge = await startBenchBridge(projectDir, {
    permissions: { write: true, terminal: true },
    env: { URLBRIDGE_SPAWNER: "off" },
  }).catch(async (error: unknown) => {
    await bridge.close();
    throw error;
  });
  try {
    // Warm, then measure the bridge's size for the floor to match.
    for (let i = 0; i < 30; i++) {
      await getJson(url(bridge.bases.m!, "x", [["run", `warm${i}`]], "echo hi"));
      await getJson(url(directBridge.bases.m!, "x", [["run", `warm${i}`]], "echo hi"));
    }
    const bridgeMiB = residentMiB(bridge.pid);
    const floorChild = spawn(process.execPath, [FLOOR_SCRIPT, String(bridgeMiB)], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let exec: ExecFigures;
    let search: SearchFigures;
    try {
      const floorUrl = await firstLine(floorChild);
      exec = await benchExec(bridge, directBridge, floorUrl, bridgeMiB);
      search = await benchSearch(bridge, projectDir, floorUrl);
    } finally {
      await stopChild(floorChild);
    }
    const grown = await benchGrown(bridge, directBridge, await growBridge(bridge), await growBridge(directBridge));
    const xOverhead = exec.x.median - exec.xRun.median - exec.stat.median;
    const markdown = [
      "### Terminal and search",
      "",
      `Measured ${new Date().toISOString().slice(0, 16)}Z, load average ${load.map((l) => l.toFixed(2)).join(" ")} at the start, ${os.loadavg()[0]!.toFixed(2)} at the end.`,
      `The built server in its own process (resident ${exec.bridgeMiB} MiB after warm-up). ${ROUNDS} rounds of each group;`,
      "figures are the median of the rounds' p50s, (lowest–highest p50) after it.",
      describeClientMethod({
        client: FETCH_CLIENT,
        order: "the floor, `/x`, `/t` and `/x` with the spawner off",
        runs: EXEC_RUNS,
        warmup: EXEC_WARMUP,
      }),
      "The target is read in this method.",
      "",
      "| measurement | p50 ms |",
      "|---|---|",
      `| floor: GET to a node:http process of ${exec.bridgeMiB} MiB that spawns \`/bin/sh -c 'echo hi'\` (n=${EXEC_RUNS}) | ${show(exec.floor)} |`,
      `| … of which the spawn, timed inside the floor | ${show(exec.floorSpawn)} |`,
      `| \`/x echo hi\` (n=${EXEC_RUNS}), the launcher forked by the resident spawner | ${show(exec.x)} |`,
      `| … of which the command (launcher + shell, its durationMs) | ${show(exec.xRun)} |`,
      `| /t stat GET on the same bridge (the HTTP and kernel share) | ${show(exec.stat)} |`,
      `| \`/x echo hi\` on a second bridge with \`URLBRIDGE_SPAWNER=off\` (the bridge forks the launcher) | ${show(exec.xDirect)} |`,
      "",
      `\`/x\` against its floor: ${show(exec.ratio)}× (target ≤ 1.3×: **${exec.ratio.median <= 1.3 ? "met" : "not met"}**); with the spawner off`,
      `${show(exec.directRatio)}×. What \`/x\` spends besides its command and a plain GET, the journal's intent commits and the`,
      `sandbox plan: ${xOverhead.toFixed(2)} ms. Event-loop (main-thread) CPU per \`/x\` (schedstat, ${CPU_ROUNDS}×${CPU_BLOCK} calls per bridge back to back,`,
      `interleaved): ${cpuText(exec.cpu.spawner)} through the spawner, ${cpuText(exec.cpu.direct)} with the bridge forking.`,
      "",
      `The same after both bridges grew: ${FULL_SESSIONS} sessions each, every response cache filled (${FULL_READS} \`/r\` of 24 KiB per session),`,
      `${ROUNDS} rounds of n=${FULL_RUNS} (the floor and both bridges in turns, timed as above), against a floor padded to the larger bridge.`,
      "",
      "| measurement | p50 ms |",
      "|---|---|",
      `| floor: \`/bin/sh -c 'echo hi'\` from a node:http process of ${Math.max(grown.spawnerMiB, grown.directMiB)} MiB | ${show(grown.floor)} |`,
      `| \`/x echo hi\`, resident spawner (bridge ${grown.spawnerMiB} MiB) | ${show(grown.x)} |`,
      `| \`/x echo hi\`, \`URLBRIDGE_SPAWNER=off\` (bridge ${grown.directMiB} MiB) | ${show(grown.xDirect)} |`,
      "",
      `Event-loop CPU per \`/x\` once grown: ${cpuText(grown.cpu.spawner)} through the spawner, ${cpuText(grown.cpu.direct)} with the bridge forking.`,
      `A \`/t\` stat GET in another session, timed as above (${CLIENT_GAP_MS} ms gap), while one session runs \`/x echo hi\` back to back (a load: no gap; n=${STAT_UNDER_X_RUNS}, median of ${ROUNDS} rounds):`,
      `p50 ${grown.statUnderX.spawner.p50.toFixed(2)} / p99 ${grown.statUnderX.spawner.p99.toFixed(2)} ms through the spawner, p50 ${grown.statUnderX.direct.p50.toFixed(2)} / p99 ${grown.statUnderX.direct.p99.toFixed(2)} ms with the bridge forking.`,
      "",
      `Search: \`${SEARCH_PATTERN}\` over the TypeScript package (${search.treeMiB.toFixed(1)} MiB, largest file ${search.largestMiB.toFixed(1)} MiB), n=${SEARCH_RUNS} per round`,
      `after ${SEARCH_WARMUP} warm-up rounds, the four rows in turns, timed as above.`,
      "",
      "| measurement | p50 ms | matching lines |",
      "|---|---|---|",
      `| floor: GET to the ${exec.bridgeMiB} MiB floor process that runs plain \`rg -F ${SEARCH_PATTERN}\` (multi-threaded) | ${show(search.floor)} | ${search.rgCount} |`,
      `| the same rg spawned by the bench process, no HTTP | ${show(search.direct)} | |`,
      `| \`rg --json --sort=path\` (one thread: what /g ran before) | ${show(search.sorted)} | |`,
      `| \`/g\` (rg confined by the launcher, answer sorted in-process) | ${show(search.g)} | ${search.gCount}${search.truncated ? " (truncated)" : ""} |`,
      "",
      `\`/g\` against plain rg: ${show(search.ratio)}× (target ≤ 1.2×: **${search.ratio.median <= 1.2 ? "met" : "not met"}**); same count as rg: **${search.gCount === search.rgCount ? "yes" : "no"}**.`,
    ].join("\n");
    return { suite: "exec-search", markdown, figures: {} };
  } finally {
    await bridge.close();
    await directBridge.close();
    fs.rmSync(projectDir, { recursive: true, force: true });
  }
}
