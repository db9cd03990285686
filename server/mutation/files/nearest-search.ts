// The nearest-lines search of a failed /e, run where it cannot hold up other sessions: in one worker thread
// (nearest-worker.ts) with a capped heap, a comparison and a time budget inside the worker, and a deadline past
// which the worker is ended. A file over MAX_NEAREST_CHARS is not searched at all: copying it into the worker
// and scanning it would cost more than an excerpt is worth, and the answer says how to find the lines instead.
import { DeadlineWorker } from "../../kernel/worker/deadline-worker.js";
import { workerEntry } from "../../kernel/worker/worker-entry.js";
import { countLines, MAX_COMPARISONS, searchNearest, type NearestSearch } from "./nearest-lines.js";

/** Largest text (UTF-16 code units, after newline normalization) the nearest-lines search reads: 16 Mi. */
export const MAX_NEAREST_CHARS = 16 * 1024 * 1024;
/**
 * A text this small, with old's lines times its lines at most INLINE_COMPARISONS, is searched on the spot: that
 * costs about a millisecond, less than handing it to the worker (most stale edits are on ordinary source files).
 */
const INLINE_CHARS = 64 * 1024;
const INLINE_COMPARISONS = 100_000;
/** Time the worker spends on one search before it stops and answers what it found (incomplete: no retry). */
export const NEAREST_BUDGET_MS = 4000;
/** Past this, counted from the call, the worker is ended and replaced: its start-up included, a backstop. */
const NEAREST_DEADLINE_MS = 15_000;
/** The worker's heap cap: a 16 Mi-character text copied in (up to 32 MiB), old's lines and one line's bigrams. */
export const NEAREST_HEAP_MB = 256;

export interface NearestJob {
  text: string;
  old: string;
  maxComparisons: number;
  budgetMs: number;
}

/** Why no nearest lines were searched: the file is over the bound, or the worker overran or failed. */
export type NearestSkip = "file_too_large" | "timed_out" | "failed";

export type NearestOutcome = { search: NearestSearch } | { skipped: NearestSkip };

const searcher = new DeadlineWorker<NearestJob, { search?: NearestSearch; error?: string }>(
  () => workerEntry(import.meta.url, "nearest-worker"),
  {
    maxOldGenerationSizeMb: NEAREST_HEAP_MB,
  },
);

/**
 * Searches in the worker one at a time: each job copies its text into the worker's heap, so jobs queued there
 * at once (many sessions' failed edits) could outgrow it. A job still waiting at its deadline is not started.
 */
let queue: Promise<unknown> = Promise.resolve();

/** The nearest lines to old in text (newlines as "\n"), searched off the event loop within the bounds above. */
export async function findNearest(text: string, old: string, signal: AbortSignal): Promise<NearestOutcome> {
  if (text.length > MAX_NEAREST_CHARS) return { skipped: "file_too_large" };
  if (text.length <= INLINE_CHARS && countLines(text) * countLines(old) <= INLINE_COMPARISONS)
    return { search: searchNearest(text, old) };
  const deadline = Date.now() + NEAREST_DEADLINE_MS;
  const turn = queue.then(async (): Promise<NearestOutcome> => {
    if (Date.now() >= deadline || signal.aborted) return { skipped: "timed_out" };
    const outcome = await searcher.run(
      { text, old, maxComparisons: MAX_COMPARISONS, budgetMs: NEAREST_BUDGET_MS },
      deadline,
      signal,
    );
    if ("reply" in outcome && outcome.reply.search) return { search: outcome.reply.search };
    return { skipped: "failed" in outcome && outcome.failed === "timeout" ? "timed_out" : "failed" };
  });
  queue = turn.catch(() => undefined);
  return turn;
}
