// Shared bench plumbing: timing functions into percentiles (as a client calls them, or back to back), and writing a
// suite's figures between its <!-- bench:<suite>:start --> / <!-- bench:<suite>:end --> markers in docs/PERFORMANCE.md.
import fs from "node:fs";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { seededRandom } from "../../test/helpers/seeded-random.js";

export interface Stats {
  n: number;
  p50: number;
  p99: number;
  mean: number;
}

export interface BenchResult {
  suite: string;
  /** Markdown written between the suite's markers. */
  markdown: string;
  figures: Record<string, Stats>;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

/**
 * Runs fn `warmup` times unmeasured, then `runs` times back to back (no gap: each call pays for the after-work of
 * the one before it); durations in milliseconds. Latency figures read against a floor use measureAsClient.
 */
export async function measure(runs: number, warmup: number, fn: () => Promise<unknown>): Promise<Stats> {
  for (let i = 0; i < warmup; i++) await fn();
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await fn();
    samples.push(performance.now() - start);
  }
  return statsOf(samples);
}

/** Replaces the text between a suite's markers; the markers themselves must already exist. */
export function writeBetweenMarkers(file: string, suite: string, markdown: string): void {
  const text = fs.readFileSync(file, "utf8");
  const start = `<!-- bench:${suite}:start -->`;
  const end = `<!-- bench:${suite}:end -->`;
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (from === -1 || to === -1 || to < from) throw new Error(`${file} has no ${start} ... ${end} markers`);
  fs.writeFileSync(file, `${text.slice(0, from + start.length)}\n${markdown}\n${text.slice(to)}`);
}

export interface Throughput {
  requests: number;
  seconds: number;
  rps: number;
}

/** Keeps `concurrency` calls of fn in flight for `durationMs`; returns completed calls per second. */
export async function measureThroughput(
  concurrency: number,
  durationMs: number,
  fn: () => Promise<unknown>,
): Promise<Throughput> {
  const started = performance.now();
  const deadline = started + durationMs;
  let requests = 0;
  const worker = async () => {
    while (performance.now() < deadline) {
      await fn();
      requests++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  return { requests, seconds, rps: requests / seconds };
}

/** Order statistics of a list of durations in milliseconds. */
export function statsOf(samples: number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const mean = sorted.reduce((a, b) => a + b, 0) / Math.max(1, sorted.length);
  return { n: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99), mean };
}

/** The gap unless BENCH_GAP_MS says otherwise (0: back to back, as the rounds before issue 34 timed, in shuffled turns). */
const DEFAULT_GAP_MS = 20;

function gapFromEnvironment(): number {
  const text = process.env.BENCH_GAP_MS;
  if (text === undefined || text === "") return DEFAULT_GAP_MS;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0)
    throw new Error(
      `BENCH_GAP_MS must be a whole number of milliseconds, 0 or more (it is "${text}"); unset it for ${DEFAULT_GAP_MS}`,
    );
  return value;
}

/**
 * The untimed pause after every call a latency figure times (issue 34): a client that thinks between calls leaves
 * the server's after-work (a journal's outcome commit, an activity row, a disk's writeback) to land in that pause,
 * where calls timed back to back bill it to whichever call comes next, ours or a floor's.
 */
export const CLIENT_GAP_MS = gapFromEnvironment();

/** The seed of sampleAsClient's turn orders: a run's orders are the same every time it runs. */
const TURN_SEED = 34;

/** The indexes 0..n-1 in an order drawn from `random` (Fisher-Yates). */
function shuffledIndexes(n: number, random: () => number): number[] {
  const order = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order;
}

/**
 * Times several functions as a client calls them: one call at a time, each function once a round so that load from
 * other processes on a shared machine falls on all alike, and an untimed `gapMs` pause after every call, warm-up
 * calls included, so each function is called after the same pause and none of them pays for the one before it.
 * Each round takes the functions in a fresh seeded order, so no function always follows the same one (an in-process
 * fsync's trail in the disk's journal, say, would otherwise land on one row only). One list of durations (ms) per
 * function, in the order given.
 */
export async function sampleAsClient(
  runs: number,
  warmup: number,
  fns: Array<() => Promise<unknown>>,
  gapMs = CLIENT_GAP_MS,
): Promise<number[][]> {
  const random = seededRandom(TURN_SEED);
  const samples = fns.map(() => [] as number[]);
  for (let round = 0; round < warmup + runs; round++)
    for (const k of shuffledIndexes(fns.length, random)) {
      const start = performance.now();
      await fns[k]!();
      if (round >= warmup) samples[k]!.push(performance.now() - start);
      if (gapMs > 0) await sleep(gapMs);
    }
  return samples;
}

/** sampleAsClient's durations as one Stats per function, in order. */
export async function measureAsClient(
  runs: number,
  warmup: number,
  fns: Array<() => Promise<unknown>>,
  gapMs = CLIENT_GAP_MS,
): Promise<Stats[]> {
  return (await sampleAsClient(runs, warmup, fns, gapMs)).map(statsOf);
}

export interface ClientMethod {
  /** Who makes the calls ("Node's global fetch (undici, keep-alive)"). */
  client: string;
  /** What is taken in turns, in order ("the bridge's /r, the bare floor, ..."). */
  order: string;
  runs: number;
  warmup: number;
  gapMs?: number;
}

/** One sentence saying exactly how measureAsClient timed a group, for a suite's generated text. */
export function describeClientMethod(method: ClientMethod): string {
  const gap = method.gapMs ?? CLIENT_GAP_MS;
  const pause =
    gap === 0
      ? "no gap between calls (BENCH_GAP_MS=0)"
      : `an untimed ${gap} ms gap after every call (warm-up included)`;
  return (
    `Client: ${method.client}, one call at a time; ${method.order} taken in turns call by call, in a shuffled` +
    ` order each round (seeded, the same every run), ${pause}; ${method.warmup} warm-up round${method.warmup === 1 ? "" : "s"}, then` +
    ` ${method.runs} timed calls of each.`
  );
}

/**
 * On-CPU time of a process's main thread so far, in nanoseconds: the first field of /proc/<pid>/schedstat
 * (the scheduler's own accounting, nanosecond resolution, Linux with schedstats). For a Node server that
 * is its event loop; GC helper and thread-pool threads are not counted. Undefined where unavailable.
 */
export function mainThreadCpuNs(pid: number): number | undefined {
  try {
    const ns = Number(fs.readFileSync(`/proc/${pid}/schedstat`, "utf8").split(" ")[0]);
    return Number.isFinite(ns) ? ns : undefined;
  } catch {
    return undefined;
  }
}

export interface CpuTarget {
  /** The process that serves fn's requests. */
  pid: number;
  fn: () => Promise<unknown>;
}

/**
 * Main-thread CPU per call (µs) of each target's serving process, the targets taken in turns of `block`
 * sequential calls so that machine load falls on all alike, as in measureInterleaved. A block's CPU is the
 * process's schedstat delta over it; the work a server does after its last answer in a block is counted in
 * the next block of that process, which is off by at most one call's tail per block. Undefined per target
 * where schedstat is unavailable.
 */
export async function measureCpuInterleaved(
  rounds: number,
  block: number,
  targets: CpuTarget[],
): Promise<Array<number | undefined>> {
  const totals = targets.map(() => 0);
  const usable = targets.map((t) => mainThreadCpuNs(t.pid) !== undefined);
  for (let round = 0; round < rounds; round++) {
    for (const [k, target] of targets.entries()) {
      const before = mainThreadCpuNs(target.pid);
      for (let i = 0; i < block; i++) await target.fn();
      const after = mainThreadCpuNs(target.pid);
      if (before === undefined || after === undefined) usable[k] = false;
      else totals[k] = totals[k]! + (after - before);
    }
  }
  return totals.map((ns, k) => (usable[k] ? ns / (rounds * block) / 1000 : undefined));
}
