// The head-of-line scenario of the large-file bench (issue 34): another session's 2 KiB read timed alone, then again
// while a heavy session pages a 16 MiB file and edits a 10 MB one. The heavy session runs in its own client process
// (large-heavy.mjs), as another agent would: its JSON parses of 133 KB pages and its event loop are not the timing
// client's, so what the timed reads wait for is the bridge, not the client holding itself up.
import { spawn } from "node:child_process";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { statsOf, type Stats } from "./harness.js";
import { firstLine, stopChild } from "./http.js";
import { mainThreadTimes } from "../soak/sampler.js";

const HEAVY_SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), "large-heavy.mjs");
/** The untimed pause after each timed read. */
export const HOL_GAP_MS = 20;
export const HOL_READS = 300;
const WARMUP = 10;

export interface HeavySession {
  /** Tells the heavy session to stop and resolves with what it did. */
  stop(): Promise<{ pages: number; edits: number }>;
}

/** Starts the heavy session's process against a bridge's /r and /m bases (sixteen.log and ten.log in its project). */
export async function startHeavySession(bases: { r: string; m: string }): Promise<HeavySession> {
  const child = spawn(process.execPath, [HEAVY_SCRIPT, bases.r, bases.m], { stdio: ["pipe", "pipe", "inherit"] });
  const ready = await firstLine(child);
  if (ready !== "ready") throw new Error(`the heavy session said ${ready}, not ready`);
  let out = "";
  child.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  return {
    async stop() {
      child.stdin!.end("stop\n");
      const code = await Promise.race([exited, sleep(60_000).then(() => "timeout" as const)]);
      if (code !== 0) {
        await stopChild(child);
        throw new Error(`the heavy session ended with ${String(code)}: ${out}`);
      }
      const last = out.trim().split("\n").at(-1) ?? "";
      return JSON.parse(last) as { pages: number; edits: number };
    },
  };
}

export interface HeadOfLine {
  alone: Stats;
  beside: Stats;
  pages: number;
  edits: number;
  /**
   * The share of each phase the bridge's event loop was runnable but waiting for a core (/proc schedstat): the
   * machine's load, which a p99 on a shared machine carries; undefined where schedstat is unavailable.
   */
  waitedForCore?: { alone: number; beside: number };
}

/** `otherR`'s 2 KiB small.txt read, HOL_READS times one at a time, alone and then beside the heavy session. */
export async function measureHeadOfLine(
  heavy: { r: string; m: string },
  otherR: string,
  bridgePid?: number,
): Promise<HeadOfLine> {
  const target = `${otherR}/r?path=small.txt`;
  const readSmall = async () => {
    const body = (await (await fetch(target)).json()) as { ok?: unknown };
    if (body.ok !== true) throw new Error(`the other session's read failed: ${JSON.stringify(body).slice(0, 300)}`);
  };
  let waits: number[] = [];
  const timedReads = async () => {
    const from = bridgePid === undefined ? undefined : mainThreadTimes(bridgePid);
    const started = performance.now();
    const samples: number[] = [];
    for (let i = 0; i < HOL_READS; i++) {
      const start = performance.now();
      await readSmall();
      samples.push(performance.now() - start);
      await sleep(HOL_GAP_MS);
    }
    const to = bridgePid === undefined ? undefined : mainThreadTimes(bridgePid);
    if (from && to) waits.push((to.waitNs - from.waitNs) / 1e6 / (performance.now() - started));
    return statsOf(samples);
  };
  for (let i = 0; i < WARMUP; i++) await readSmall();
  waits = [];
  const alone = await timedReads();
  const session = await startHeavySession(heavy);
  const beside = await timedReads().catch(async (error: unknown) => {
    await session.stop().catch(() => undefined);
    throw error;
  });
  const done = await session.stop();
  const [waitAlone, waitBeside] = waits;
  const waitedForCore =
    waitAlone !== undefined && waitBeside !== undefined ? { alone: waitAlone, beside: waitBeside } : undefined;
  return { alone, beside, ...done, ...(waitedForCore ? { waitedForCore } : {}) };
}
