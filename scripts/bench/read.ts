// Read benchmarks: /r of a 2 KiB file, /r of three files and /g over a generated 5,000-file tree, each
// beside its floor measured in the same run: for /r a bare node:http server and a Koa pass-through (the
// data plane's shell) returning the same bytes, and for /g rg run directly with the flags /g uses. Latency is timed as
// a client calls (harness.ts measureAsClient: Node's fetch, one call at a time, in turns, an untimed gap after each).
import { spawn } from "node:child_process";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { MAX_READ_BYTES } from "../../server/kernel/limits.js";
import { locateExecutable } from "../../server/kernel/read/executables.js";
import { ripgrepBaseArgs } from "../../server/kernel/search/ripgrep.js";
import { compileSearchPattern } from "../../server/kernel/search/search-pattern.js";
import { encodeUrlText } from "../../server/url-grammar/encode.js";
import { makeBenchDir, startBenchBridge } from "./bridge.js";
import {
  describeClientMethod,
  measureAsClient,
  measureCpuInterleaved,
  measureThroughput,
  type BenchResult,
  type Stats,
  type Throughput,
} from "./harness.js";
import { FETCH_CLIENT, fetchBody, startFloorServer, type FloorServer } from "./http.js";
import { GREP_NEEDLE, sourceText, writeGrepTree } from "./read-tree.js";

const READ_RUNS = 200;
const READ_WARMUP = 20;
const READ_CONCURRENCY = 4;
const READ_THROUGHPUT_MS = 3000;
/** CPU-per-call figures: rounds of CPU_BLOCK sequential calls per target, the targets taken in turns. */
const CPU_ROUNDS = 20;
const CPU_BLOCK = 50;
const GREP_RUNS = 40;
const GREP_WARMUP = 5;
const GREP_CONCURRENCY = 2;
const GREP_THROUGHPUT_MS = 5000;
/** Targets from issue 2: p50 ratios to the floor. */
const READ_TARGET = 2;
const GREP_TARGET = 1.3;
/** Target from issue 11: /r's p50 ratio to the Koa pass-through floor. */
const KOA_FLOOR_TARGET = 1.1;
const JSON_TYPE = "application/json; charset=utf-8";

interface Row {
  name: string;
  ours: Stats;
  oursRps: Throughput;
  floor: Stats;
  floorRps: Throughput;
  floorName: string;
  target: number;
}

/** Main-thread CPU per call of the serving process (µs), from /proc/<pid>/schedstat; undefined off Linux. */
interface CpuPerCall {
  ours: number | undefined;
  koa: number | undefined;
  /** /t of the same file through the bridge. */
  stat: number | undefined;
}

/** One /r case against both floors, all four timed in one loop, in turns. */
interface ShellRow {
  name: string;
  ours: Stats;
  bare: Stats;
  koa: Stats;
  koaRps: Throughput;
  cpu: CpuPerCall;
}

/** Runs rg the way /g does and waits for all of its output. */
function runRipgrep(rg: string, args: string[], cwd: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(rg, args, { cwd, stdio: ["ignore", "pipe", "ignore"] });
    let bytes = 0;
    child.stdout.on("data", (chunk: Buffer) => (bytes += chunk.length));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve(bytes) : reject(new Error(`rg exited with ${code}`))));
  });
}

async function benchReads(): Promise<{ rows: Row[]; shell: ShellRow[]; gateway: Stats }> {
  const root = makeBenchDir("read");
  fs.writeFileSync(path.join(root, "two-k.ts"), sourceText(7, 2048));
  for (const name of ["one.ts", "two.ts", "three.ts"])
    fs.writeFileSync(path.join(root, name), sourceText(name.length, 2048));
  const bridge = await startBenchBridge(root);
  const rows: Row[] = [];
  const shell: ShellRow[] = [];
  let gateway: Stats | undefined;
  try {
    const cases: Array<[string, string]> = [
      ["/r of a 2 KiB file", `${bridge.bases.r}/r?path=two-k.ts`],
      ["/r of three 2 KiB files", `${bridge.bases.r}/r?path=one.ts&path=two.ts&path=three.ts`],
    ];
    for (const [name, target] of cases) {
      const body = await fetchBody(target);
      const parsed = JSON.parse(body.toString("utf8")) as { ok: boolean; allComplete?: boolean };
      if (!parsed.ok || !parsed.allComplete)
        throw new Error(`${name}: unexpected answer ${body.toString("utf8").slice(0, 200)}`);
      const floors: FloorServer[] = [];
      try {
        const floor = await startFloorServer(body, JSON_TYPE);
        floors.push(floor);
        const koaFloor = await startFloorServer(body, JSON_TYPE, "koa");
        floors.push(koaFloor);
        // Context for reading the ratio: what every gateway call costs (a stat of the same file, no content).
        const stat = () => fetchBody(`${bridge.bases.r}/t?path=two-k.ts`);
        const [ours, bare, koa, t] = (await measureAsClient(READ_RUNS, READ_WARMUP, [
          () => fetchBody(target),
          () => fetchBody(floor.url),
          () => fetchBody(koaFloor.url),
          stat,
        ])) as [Stats, Stats, Stats, Stats];
        gateway ??= t;
        const [oursCpu, koaCpu, statCpu] = await measureCpuInterleaved(CPU_ROUNDS, CPU_BLOCK, [
          { pid: bridge.pid, fn: () => fetchBody(target) },
          { pid: koaFloor.pid, fn: () => fetchBody(koaFloor.url) },
          { pid: bridge.pid, fn: stat },
        ]);
        const cpu: CpuPerCall = { ours: oursCpu, koa: koaCpu, stat: statCpu };
        const oursRps = await measureThroughput(READ_CONCURRENCY, READ_THROUGHPUT_MS, () => fetchBody(target));
        const floorRps = await measureThroughput(READ_CONCURRENCY, READ_THROUGHPUT_MS, () => fetchBody(floor.url));
        const koaRps = await measureThroughput(READ_CONCURRENCY, READ_THROUGHPUT_MS, () => fetchBody(koaFloor.url));
        const caseName = `${name} (${body.length} B response)`;
        rows.push({
          name: caseName,
          ours,
          oursRps,
          floor: bare,
          floorRps,
          floorName: "bare node:http, same bytes",
          target: READ_TARGET,
        });
        shell.push({ name: caseName, ours, bare, koa, koaRps, cpu });
      } finally {
        await Promise.all(floors.map((f) => f.close()));
      }
    }
  } finally {
    await bridge.close();
    fs.rmSync(root, { recursive: true, force: true });
  }
  if (!gateway) throw new Error("no /r case ran");
  return { rows, shell, gateway };
}

const LARGE_READ_RUNS = 200;
const LARGE_READ_WARMUP = 20;
/** A 60 KiB file: one GET by default since the page became 64 KiB (issue 34; three of 24 KiB before), one with max=. */
const LARGE_READ_BYTES = 60 * 1024;
const LARGE_READ_MAX = 64 * 1024;

interface LargeRead {
  bytes: number;
  pages: number;
  paged: Stats;
  whole: Stats;
  floor: Stats;
}

/** /r of a 60 KiB file followed page by page (default budget) against one GET with max=, and a bare floor serving that one answer. */
async function benchLargeRead(): Promise<LargeRead> {
  const root = makeBenchDir("read-large");
  fs.writeFileSync(path.join(root, "sixty-k.ts"), sourceText(11, LARGE_READ_BYTES));
  const bridge = await startBenchBridge(root);
  try {
    const first = `${bridge.bases.r}/r?path=sixty-k.ts`;
    const followed = async () => {
      let next: string | undefined = first;
      let pages = 0;
      while (next && pages < 10) {
        next = (JSON.parse((await fetchBody(next)).toString("utf8")) as { next?: string }).next;
        pages++;
      }
      return pages;
    };
    const pages = await followed();
    const wholeUrl = `${first}&max=${LARGE_READ_MAX}`;
    const body = await fetchBody(wholeUrl);
    if ((JSON.parse(body.toString("utf8")) as { allComplete?: boolean }).allComplete !== true)
      throw new Error("/r with max= did not return the 60 KiB file whole");
    const floor = await startFloorServer(body, JSON_TYPE);
    try {
      const [paged, whole, bare] = (await measureAsClient(LARGE_READ_RUNS, LARGE_READ_WARMUP, [
        followed,
        () => fetchBody(wholeUrl),
        () => fetchBody(floor.url),
      ])) as [Stats, Stats, Stats];
      return { bytes: body.length, pages, paged, whole, floor: bare };
    } finally {
      await floor.close();
    }
  } finally {
    await bridge.close();
    fs.rmSync(root, { recursive: true, force: true });
  }
}

function largeReadLines(large: LargeRead): string[] {
  const ms = (s: Stats) => `${s.p50.toFixed(2)} | ${s.p99.toFixed(2)}`;
  return [
    "",
    `A 60 KiB file (issue 18, "reads that fit the reader"): followed page by page with the default ${MAX_READ_BYTES / 1024} KiB budget, against one GET with`,
    `\`max=${LARGE_READ_MAX}\` and a bare node:http floor serving that one answer (${large.bytes} B), in turns as above, n=${large.whole.n} each:`,
    "",
    "| case | p50 ms | p99 ms | p50 ratio to the floor |",
    "|---|---|---|---|",
    `| /r default budget, ${large.pages} GET${large.pages === 1 ? "" : "s"} following next | ${ms(large.paged)} | ${(large.paged.p50 / large.floor.p50).toFixed(2)}× |`,
    `| /r \`max=${LARGE_READ_MAX}\`, one GET | ${ms(large.whole)} | ${(large.whole.p50 / large.floor.p50).toFixed(2)}× |`,
    `| bare node:http, same bytes | ${ms(large.floor)} | 1.00× |`,
  ];
}

async function benchGrep(rg: string): Promise<{ row: Row; tree: ReturnType<typeof writeGrepTree> }> {
  const root = makeBenchDir("grep");
  const tree = writeGrepTree(root);
  const bridge = await startBenchBridge(root, { env: { URLBRIDGE_GREP_ENGINE: "rg" } });
  try {
    const target = `${bridge.bases.r}/g?raw=${encodeUrlText(GREP_NEEDLE)}`;
    const answer = JSON.parse((await fetchBody(target)).toString("utf8")) as {
      ok: boolean;
      engine: string;
      matchedLines: number;
      truncated: boolean;
    };
    if (!answer.ok || answer.engine !== "rg" || answer.matchedLines !== tree.needleFiles || answer.truncated) {
      throw new Error(`/g answered unexpectedly: ${JSON.stringify(answer).slice(0, 300)}`);
    }
    const args = [
      ...ripgrepBaseArgs(false),
      ...compileSearchPattern(GREP_NEEDLE, { regex: false, ignoreCase: false }).rgArgs,
      "--",
      ".",
    ];
    const direct = () => runRipgrep(rg, args, root);
    const [ours, floor] = (await measureAsClient(GREP_RUNS, GREP_WARMUP, [() => fetchBody(target), direct])) as [
      Stats,
      Stats,
    ];
    const oursRps = await measureThroughput(GREP_CONCURRENCY, GREP_THROUGHPUT_MS, () => fetchBody(target));
    const floorRps = await measureThroughput(GREP_CONCURRENCY, GREP_THROUGHPUT_MS, direct);
    const row: Row = {
      name: `/g literal over ${tree.files} files (${tree.needleFiles} matching lines)`,
      ours,
      oursRps,
      floor,
      floorRps,
      floorName: "rg run directly, same flags",
      target: GREP_TARGET,
    };
    return { row, tree };
  } finally {
    await bridge.close();
    fs.rmSync(root, { recursive: true, force: true });
  }
}

function formatRow(row: Row): string {
  const ratio = row.ours.p50 / row.floor.p50;
  const met = ratio <= row.target ? "met" : "**missed**";
  return `| ${row.name} | ${row.ours.p50.toFixed(2)} | ${row.ours.p99.toFixed(2)} | ${row.oursRps.rps.toFixed(0)} | ${row.floorName} | ${row.floor.p50.toFixed(2)} | ${row.floor.p99.toFixed(2)} | ${row.floorRps.rps.toFixed(0)} | ${ratio.toFixed(2)}× | ≤ ${row.target}× ${met} |`;
}

const micros = (value: number | undefined) => (value === undefined ? "n/a" : value.toFixed(0));

function formatShellRow(row: ShellRow): string {
  const ratio = row.ours.p50 / row.koa.p50;
  const met = ratio <= KOA_FLOOR_TARGET ? "met" : "**missed**";
  const cpuRatio = row.cpu.ours !== undefined && row.cpu.koa ? `${(row.cpu.ours / row.cpu.koa).toFixed(2)}×` : "n/a";
  return `| ${row.name} | ${row.ours.p50.toFixed(2)} | ${row.bare.p50.toFixed(2)} | ${row.koa.p50.toFixed(2)} | ${row.koa.p99.toFixed(2)} | ${row.koaRps.rps.toFixed(0)} | ${(row.koa.p50 / row.bare.p50).toFixed(2)}× | ${(row.ours.p50 / row.bare.p50).toFixed(2)}× | ${ratio.toFixed(2)}× | ≤ ${KOA_FLOOR_TARGET}× ${met} | ${micros(row.cpu.ours)} | ${micros(row.cpu.koa)} | ${cpuRatio} |`;
}

/** What the shell costs on its own, and whether /r met its target against the Koa floor. */
function shellVerdict(single: ShellRow, gateway: Stats): string[] {
  const ratio = single.ours.p50 / single.koa.p50;
  const own = `The shell's own cost is the Koa pass-through against the bare floor: ${(single.koa.p50 / single.bare.p50).toFixed(2)}× at p50.`;
  const cpu =
    single.cpu.ours !== undefined && single.cpu.koa !== undefined && single.cpu.stat !== undefined
      ? [
          `Main-thread CPU per call (schedstat, ${CPU_ROUNDS * CPU_BLOCK} calls each, in turns of ${CPU_BLOCK} back to back: CPU time, not latency, so no gap): /r ${micros(single.cpu.ours)} µs, /t ${micros(single.cpu.stat)} µs, the Koa floor ${micros(single.cpu.koa)} µs.`,
        ]
      : [];
  if (ratio <= KOA_FLOOR_TARGET)
    return [
      "",
      own,
      ...cpu,
      `/r meets its ${KOA_FLOOR_TARGET}× target against the Koa pass-through floor (${ratio.toFixed(2)}×).`,
    ];
  return [
    "",
    own,
    ...cpu,
    `/r misses its ${KOA_FLOOR_TARGET}× target against the Koa pass-through floor (${ratio.toFixed(2)}×): that gap is not the shell's but the`,
    `gateway's and the read's; /t alone is ${(gateway.p50 / single.koa.p50).toFixed(2)}× the Koa floor (see "Where the /r time goes").`,
  ];
}

/** Says plainly whether /r met its target and, if not, how the time splits. */
function readVerdict(single: Row, gateway: Stats): string[] {
  const ratio = single.ours.p50 / single.floor.p50;
  if (ratio <= single.target) return ["", `/r meets its ${single.target}× target (${ratio.toFixed(2)}×).`];
  return [
    "",
    `/r misses its ${single.target}× target (${ratio.toFixed(2)}×): the per-call gateway work alone (/t) is ${(gateway.p50 / single.floor.p50).toFixed(1)}× the bare floor,`,
    "and the read adds its file system calls (realpath for containment, open/fstat/read/close), a SHA-256",
    "fingerprint for read coverage and serializing the content into JSON. Load on the shared cores widens the gap.",
  ];
}

export async function runReadBench(): Promise<BenchResult> {
  const rg = await locateExecutable("rg");
  if (!rg) throw new Error("the read bench needs rg on PATH for the /g floor");
  const rgVersion = execFileSync(rg, ["--version"], { encoding: "utf8" }).split("\n")[0];
  const load = os.loadavg();
  const { rows: reads, shell, gateway } = await benchReads();
  const large = await benchLargeRead();
  const { row: grep, tree } = await benchGrep(rg);
  const rows = [...reads, grep];
  const single = reads[0]!;
  const cpu = os.cpus()[0]?.model ?? "unknown CPU";
  return {
    suite: "read",
    markdown: [
      "### Read kernel",
      "",
      `Measured ${new Date().toISOString().slice(0, 16)}Z on ${os.cpus().length} × ${cpu}, Node ${process.version}, ${rgVersion}. The bridge is the`,
      "built server (`node dist/server/main.js`, as `npm start` runs it) and every floor server runs in a process of its own too.",
      `Load average ${load.map((l) => l.toFixed(2)).join(" ")} at the start, ${os.loadavg()[0]!.toFixed(2)} at the end.`,
      `Latency: ${describeClientMethod({ client: FETCH_CLIENT, order: "each case with its floors (for /r: /r, the bare floor, the Koa floor, /t)", runs: READ_RUNS, warmup: READ_WARMUP })}`,
      `/g: the same with ${GREP_RUNS} timed calls after ${GREP_WARMUP} warm-up rounds. Throughput (the req/s columns, no gap, the same client): ${READ_CONCURRENCY} (/r) or ${GREP_CONCURRENCY} (/g) requests kept in flight`,
      `for ${READ_THROUGHPUT_MS / 1000} / ${GREP_THROUGHPUT_MS / 1000} s. The /g tree is ${tree.files} generated source files (${(tree.bytes / 1024 / 1024).toFixed(1)} MiB) in 50 folders;`,
      "its floor spawns rg with the flags /g passes (--json, --sort=path, ignore rules) and reads all its output.",
      "",
      "| case | p50 ms | p99 ms | req/s | floor | floor p50 ms | floor p99 ms | floor req/s | p50 ratio | target |",
      "|---|---|---|---|---|---|---|---|---|---|",
      ...rows.map(formatRow),
      "",
      "Where the /r time goes, timed in the same turns as the 2 KiB case:",
      "",
      `- /t (stat) of the same file through the bridge: p50 ${gateway.p50.toFixed(2)} ms: the per-call work every route pays`,
      `  (capability lookup, strict binding, path containment, a small JSON answer), ${(gateway.p50 / single.floor.p50).toFixed(2)}× the bare floor;`,
      `- /r of the 2 KiB file: p50 ${single.ours.p50.toFixed(2)} ms, so reading, decoding, fingerprinting and paging the file adds about`,
      `  ${Math.max(0, single.ours.p50 - gateway.p50).toFixed(2)} ms to that.`,
      ...readVerdict(single, gateway),
      ...largeReadLines(large),
      "",
      "The data plane's Koa shell: the bridge's data-plane server is a Koa app whose one middleware hands `ctx.req`/`ctx.res`",
      "to the listener with `ctx.respond = false` (server/gateway/koa-shell.ts). Its floor is the bare floor's handler behind",
      "the same one-middleware pass-through, same bytes, timed in the same turns as /r, the bare floor and /t.",
      `CPU µs/call: the serving process's main-thread (event loop) on-CPU time from /proc/<pid>/schedstat, over ${CPU_ROUNDS * CPU_BLOCK} sequential calls`,
      `of each target taken in turns of ${CPU_BLOCK} (/r, the Koa floor, /t), after the latency loop; GC helper and thread-pool threads are not counted.`,
      "",
      "| case | /r p50 ms | bare floor p50 ms | Koa pass-through p50 ms | Koa p99 ms | Koa req/s | Koa ÷ bare | /r ÷ bare | /r ÷ Koa | target | /r CPU µs/call | Koa CPU µs/call | CPU ratio |",
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
      ...shell.map(formatShellRow),
      ...shellVerdict(shell[0]!, gateway),
    ].join("\n"),
    figures: {
      gateway,
      largePaged: large.paged,
      largeWhole: large.whole,
      largeFloor: large.floor,
      ...Object.fromEntries(
        rows.flatMap((r, i) => [
          [`case${i}`, r.ours],
          [`floor${i}`, r.floor],
        ]),
      ),
      ...Object.fromEntries(shell.map((r, i) => [`koaFloor${i}`, r.koa])),
    },
  };
}
