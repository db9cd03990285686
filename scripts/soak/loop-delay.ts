// Event-loop delay of both ends of the soak: the bridge's (loop-probe.mjs, preloaded into it, started and stopped
// by SIGUSR2 around the load) and the soak client's own, so a long tail in the client's loop, which every answer
// it times waits behind too, is told apart from the bridge's.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { monitorEventLoopDelay, type IntervalHistogram } from "node:perf_hooks";

/** A loop's delay over the load, in ms: how late a 1 ms timer fired, i.e. how long the turn before it ran. */
export interface LoopDelay {
  samples: number;
  p50: number;
  p99: number;
  p999: number;
  max: number;
}

interface HistogramSummary {
  count: number;
  maxNs: number;
  percentiles: Record<string, number>;
}

const PROBE = path.join(path.dirname(fileURLToPath(import.meta.url)), "loop-probe.mjs");

/** The value at or above `p` percent, from a histogram's percentile table (ns), in ms. */
function at(percentiles: Record<string, number>, p: number): number {
  const keys = Object.keys(percentiles)
    .map(Number)
    .sort((a, b) => a - b);
  const key = keys.find((k) => k >= p) ?? keys.at(-1);
  return key === undefined ? 0 : percentiles[String(key)]! / 1e6;
}

export function summarize(summary: HistogramSummary): LoopDelay {
  return {
    samples: summary.count,
    p50: at(summary.percentiles, 50),
    p99: at(summary.percentiles, 99),
    p999: at(summary.percentiles, 99.9),
    max: summary.maxNs / 1e6,
  };
}

/** The client's own loop: started before the load, stopped after it. */
export function watchOwnLoop(): { stop(): LoopDelay } {
  const histogram: IntervalHistogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  return {
    stop() {
      histogram.disable();
      const percentiles = Object.fromEntries([...histogram.percentiles].map(([p, v]) => [String(p), v]));
      return summarize({ count: histogram.count, maxNs: histogram.max, percentiles });
    },
  };
}

/** The bridge's node arguments and environment that preload the probe, writing its summary to `file`. */
export function bridgeProbe(file: string): { nodeArgs: string[]; env: Record<string, string> } {
  return { nodeArgs: [`--import=${PROBE}`], env: { URLBRIDGE_SOAK_LOOP_FILE: file } };
}

/** Starts (first call) or stops and reads (second call) the bridge's probe. */
export function signalProbe(pid: number): void {
  process.kill(pid, "SIGUSR2");
}

/** The bridge's summary once its probe has written it (it answers the second signal within a turn or so). */
export async function readBridgeLoop(file: string, timeoutMs = 5000): Promise<LoopDelay | undefined> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    try {
      return summarize(JSON.parse(fs.readFileSync(file, "utf8")) as HistogramSummary);
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
  return undefined;
}

export function formatLoopDelay(delay: LoopDelay | undefined): string {
  if (!delay) return "not measured";
  return `p50 ${delay.p50.toFixed(1)} / p99 ${delay.p99.toFixed(1)} / p99.9 ${delay.p999.toFixed(1)} / max ${delay.max.toFixed(1)} ms (${delay.samples} samples)`;
}
