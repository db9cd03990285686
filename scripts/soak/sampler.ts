// Resource samples of the bridge process while the soak runs: resident memory, open file descriptors and the
// size of SQLite's write-ahead log, read from /proc and the state directory; the WAL's peak is watched more often.
import fs from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";

export interface Sample {
  atS: number;
  rssMiB: number;
  fds: number;
  walKiB: number;
  /** Requests done so far, when the load runs in the soak's own process. */
  requests: number | undefined;
}

function rssMiB(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
  return kb / 1024;
}

function walKiB(stateDir: string): number {
  try {
    return fs.statSync(path.join(stateDir, "urlbridge.sqlite-wal")).size / 1024;
  } catch {
    return 0;
  }
}

/** How often the WAL's size is looked at for its peak: the checkpoint worker's rounds come every 250 ms. */
export const WAL_PEAK_EVERY_MS = 100;

export function startSampler(pid: number, stateDir: string, everyMs: number, requests: () => number | undefined) {
  const started = performance.now();
  const samples: Sample[] = [];
  let walPeakKiB = 0;
  const watchWal = setInterval(() => {
    walPeakKiB = Math.max(walPeakKiB, walKiB(stateDir));
  }, WAL_PEAK_EVERY_MS);
  const take = () => {
    try {
      samples.push({
        atS: (performance.now() - started) / 1000,
        rssMiB: rssMiB(pid),
        fds: fs.readdirSync(`/proc/${pid}/fd`).length,
        walKiB: walKiB(stateDir),
        requests: requests(),
      });
    } catch {
      // The process is gone; the report says so through the missing samples.
    }
  };
  take();
  const timer = setInterval(take, everyMs);
  return {
    samples,
    /** The largest the WAL file was seen at, in KiB. */
    walPeakKiB: () => Math.max(walPeakKiB, ...samples.map((s) => s.walKiB)),
    stop(): Sample[] {
      clearInterval(timer);
      clearInterval(watchWal);
      take();
      return samples;
    },
  };
}

/** The bridge's main thread (its event loop) from /proc/<pid>/schedstat: time on a core, time runnable but waiting. */
export interface ThreadTimes {
  cpuNs: number;
  waitNs: number;
}

export function mainThreadTimes(pid: number): ThreadTimes | undefined {
  try {
    const [cpu, wait] = fs.readFileSync(`/proc/${pid}/schedstat`, "utf8").split(" ").map(Number);
    return Number.isFinite(cpu) && Number.isFinite(wait) ? { cpuNs: cpu!, waitNs: wait! } : undefined;
  } catch {
    return undefined;
  }
}
