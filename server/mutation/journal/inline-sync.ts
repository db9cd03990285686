// When a journaled mutation makes its fsyncs inline on the event loop instead of through the thread pool. A trip
// through the pool costs the mutation the rest of an event-loop turn: nothing on a loop that answers calls one by
// one, tens to hundreds of ms on one with hundreds of calls in flight (docs/PERFORMANCE.md, "Durable mutations",
// the soak). An inline fsync costs every other call well under a millisecond, which only a quick loop notices.
import { performance } from "node:perf_hooks";

/** Turns longer than this make an inline fsync (~0.1-1 ms) the cheaper choice for everyone. */
export const SATURATED_TURN_MS = 10;
/**
 * And at least this many intents in flight in the process: a long turn alone may be the machine descheduling the
 * process (a shared host), where an inline fsync would only make the next reader wait longer.
 */
export const SATURATED_INTENTS = 8;
/** The turn length is probed at most this often, on demand (one setImmediate). */
const PROBE_EVERY_MS = 50;

let turnMs = 0;
let probing = false;
let probedAt = Number.NEGATIVE_INFINITY;

/**
 * True while many intents are in flight and the event loop's turns are long: measured as how long a setImmediate
 * queued by the last probe waited (the rest of its turn), which is what a thread-pool completion waits too.
 */
export function loopIsSaturated(intentsInFlight: number): boolean {
  if (intentsInFlight < SATURATED_INTENTS) return false;
  const now = performance.now();
  if (!probing && now - probedAt >= PROBE_EVERY_MS) {
    probing = true;
    probedAt = now;
    setImmediate(() => {
      turnMs = performance.now() - now;
      probing = false;
    });
  }
  return turnMs > SATURATED_TURN_MS;
}
