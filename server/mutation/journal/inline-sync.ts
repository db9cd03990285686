// When a journaled mutation makes its fsyncs inline on the event loop instead of through the thread pool. A trip
// through the pool costs the mutation one event-loop turn: nothing on an idle loop, tens to hundreds of ms on a
// saturated one (docs/PERFORMANCE.md, "Durable mutations", the soak). An inline fsync costs every other call a
// fraction of a millisecond, which on an idle loop is what readers would notice and on a saturated one is not.
import { performance } from "node:perf_hooks";
import type { ToolContext } from "../../kernel/tool/definition.js";
import { runtimeOf } from "./context.js";

/** The loop counts as saturated when it was busy more than this share of the last window. */
export const BUSY_LOOP_UTILIZATION = 0.5;
/** How often the utilization is sampled (at most once per this many ms, on demand). */
const WINDOW_MS = 100;

let previous = performance.eventLoopUtilization();
let sampledAt = performance.now();
let busy = false;

/** True while the event loop has been busy more than BUSY_LOOP_UTILIZATION of the last ~100 ms. */
export function loopIsSaturated(): boolean {
  const now = performance.now();
  if (now - sampledAt >= WINDOW_MS) {
    const current = performance.eventLoopUtilization();
    busy = performance.eventLoopUtilization(current, previous).utilization > BUSY_LOOP_UTILIZATION;
    previous = current;
    sampledAt = now;
  }
  return busy;
}

/**
 * True when a file mutation should sync inline: other mutations of its project are queued behind it (each trip
 * would hold all of them up for a turn), or the loop is saturated.
 */
export function syncInline(ctx: ToolContext): boolean {
  return runtimeOf(ctx).queue.waiting(ctx.project.root) > 0 || loopIsSaturated();
}
