// Floods of unknown capability tokens on the data plane and the MCP socket: past a free allowance per source, each
// refusal (the opaque 404; the socket's refused or unauthorized line) is held a little longer (bounded, and never
// more than a few at once), and the operator gets one bounded log line per interval. Tokens are never logged. The
// 404 itself is byte-for-byte the usual opaque one.
import { createFailureBackoff, type FailureBackoff } from "../failure-backoff.js";
import type { Logger } from "../log.js";
import type { UnknownTokenThrottle } from "../edge/capability.js";
import { sendOpaqueNotFound } from "./respond.js";

/** Unknown tokens per source per window answered at once: an agent holding stale URLs after a rotation. */
export const UNKNOWN_TOKEN_FREE = 20;
export const UNKNOWN_TOKEN_BASE_DELAY_MS = 100;
export const UNKNOWN_TOKEN_MAX_DELAY_MS = 2000;
export const UNKNOWN_TOKEN_WINDOW_MS = 60_000;
/**
 * Answers held at once, all sources together. Kept well under a quick tunnel's ~200 requests in flight, so a
 * flood cannot take the tunnel's capacity from the real agent; beyond it a 404 goes out at once.
 */
export const UNKNOWN_TOKEN_MAX_HELD = 64;
export const UNKNOWN_TOKEN_MAX_SOURCES = 4096;
/** At most one summary line per interval while a flood lasts. */
export const FLOOD_SUMMARY_INTERVAL_MS = 60_000;
const SUMMARY_TOP_SOURCES = 3;
/** Sources counted for one summary; the rest are added up as "others". */
const SUMMARY_MAX_SOURCES = 256;

// Its shape lives in edge/capability.ts (the MCP socket holds one too); gateway modules keep this name.
export type { UnknownTokenThrottle } from "../edge/capability.js";

/** URLBRIDGE_UNKNOWN_TOKEN_THROTTLE=0: every refusal at once, nothing counted. */
export const NO_UNKNOWN_TOKEN_THROTTLE: UnknownTokenThrottle = {
  answer: (res) => sendOpaqueNotFound(res),
  refuse: (_source, send) => send(),
};

interface Tally {
  since: number;
  total: number;
  held: number;
  saturated: number;
  bySource: Map<string, number>;
  others: number;
}

const emptyTally = (now: number): Tally => ({
  since: now,
  total: 0,
  held: 0,
  saturated: 0,
  bySource: new Map(),
  others: 0,
});

export function createUnknownTokenThrottle(log: Logger, now: () => number = Date.now): UnknownTokenThrottle {
  const backoff: FailureBackoff = createFailureBackoff({
    freeFailures: UNKNOWN_TOKEN_FREE,
    baseDelayMs: UNKNOWN_TOKEN_BASE_DELAY_MS,
    maxDelayMs: UNKNOWN_TOKEN_MAX_DELAY_MS,
    windowMs: UNKNOWN_TOKEN_WINDOW_MS,
    maxHeld: UNKNOWN_TOKEN_MAX_HELD,
    maxSources: UNKNOWN_TOKEN_MAX_SOURCES,
    now,
  });
  let tally = emptyTally(now());
  let lastSummaryAt = -Infinity;
  let flushTimer: NodeJS.Timeout | undefined;

  function count(source: string): void {
    tally.total += 1;
    const n = tally.bySource.get(source);
    if (n !== undefined) tally.bySource.set(source, n + 1);
    else if (tally.bySource.size < SUMMARY_MAX_SOURCES) tally.bySource.set(source, 1);
    else tally.others += 1;
  }

  function summarize(): void {
    if (flushTimer) clearTimeout(flushTimer);
    flushTimer = undefined;
    if (tally.total === 0) return;
    const t = now();
    const top = [...tally.bySource].sort((a, b) => b[1] - a[1]).slice(0, SUMMARY_TOP_SOURCES);
    const sources = tally.bySource.size + (tally.others > 0 ? 1 : 0);
    log.warn(
      `unknown capability tokens: ${tally.total} in ${Math.max(1, Math.round((t - tally.since) / 1000))} s from ${sources}${tally.others > 0 ? "+" : ""} source(s) ` +
        `(top: ${top.map(([s, n]) => `${s} ${n}`).join(", ")}); ${tally.held} answers held, ${tally.saturated} answered at once because ${UNKNOWN_TOKEN_MAX_HELD} were held already. ` +
        "Someone is guessing or replaying dead URLs; rotate the sessions if you suspect a leak.",
    );
    lastSummaryAt = t;
    tally = emptyTally(t);
  }

  function noteFlood(): void {
    if (now() - lastSummaryAt >= FLOOD_SUMMARY_INTERVAL_MS) summarize();
    else if (!flushTimer) {
      // The rest of this flood is summarized at the interval's end, even if it stops before then.
      flushTimer = setTimeout(summarize, lastSummaryAt + FLOOD_SUMMARY_INTERVAL_MS - now());
      flushTimer.unref();
    }
  }

  function refuse(source: string, send: () => void, gone: () => boolean): void {
    count(source);
    const delay = backoff.delayFor(backoff.record(source));
    if (delay === 0) {
      // A flood's tally still waiting for its line goes out with the first miss after the interval.
      if (tally.held + tally.saturated > 0 && now() - lastSummaryAt >= FLOOD_SUMMARY_INTERVAL_MS) summarize();
      return send();
    }
    const holding = backoff.hold(delay);
    if (holding) tally.held += 1;
    else tally.saturated += 1;
    noteFlood();
    if (!holding) return send();
    void holding.then(() => {
      // The asker may have given up meanwhile; there is nobody left to answer.
      if (!gone()) send();
    });
  }

  return {
    answer: (res, source) =>
      refuse(
        source,
        () => sendOpaqueNotFound(res),
        () => res.destroyed,
      ),
    refuse,
  };
}
