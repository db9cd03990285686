// Shared bench plumbing: timing a function many times into percentiles, and writing a suite's figures
// between its <!-- bench:<suite>:start --> / <!-- bench:<suite>:end --> markers in docs/PERFORMANCE.md.
import fs from "node:fs";
import { performance } from "node:perf_hooks";

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

/** Runs fn `warmup` times unmeasured, then `runs` times one after another; durations in milliseconds. */
export async function measure(runs: number, warmup: number, fn: () => Promise<unknown>): Promise<Stats> {
  for (let i = 0; i < warmup; i++) await fn();
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await fn();
    samples.push(performance.now() - start);
  }
  samples.sort((a, b) => a - b);
  return {
    n: runs,
    p50: percentile(samples, 50),
    p99: percentile(samples, 99),
    mean: samples.reduce((a, b) => a + b, 0) / runs,
  };
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

/**
 * Times several functions in alternation (a, b, c, a, b, c, ...) so that load from other processes on a
 * shared machine falls on all of them alike; returns one Stats per function, in order.
 */
export async function measureInterleaved(
  runs: number,
  warmup: number,
  fns: Array<() => Promise<unknown>>,
): Promise<Stats[]> {
  for (let i = 0; i < warmup; i++) for (const fn of fns) await fn();
  const samples = fns.map(() => [] as number[]);
  for (let i = 0; i < runs; i++) {
    for (const [k, fn] of fns.entries()) {
      const start = performance.now();
      await fn();
      samples[k]!.push(performance.now() - start);
    }
  }
  return samples.map((s) => {
    s.sort((a, b) => a - b);
    return { n: runs, p50: percentile(s, 50), p99: percentile(s, 99), mean: s.reduce((a, b) => a + b, 0) / runs };
  });
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
