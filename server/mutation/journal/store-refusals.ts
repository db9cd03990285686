// What the journal runner answers when the store refuses a write that precedes a tool's side effects: an intent
// that cannot be recorded (or made durable) must not run, so each such refusal is a retryable
// state_store_unavailable before anything executes (journal-runner.ts).
import { setTimeout as sleep } from "node:timers/promises";
import { ErrorCode, ToolError } from "../../errors.js";
import type { RunOutcome } from "../../kernel/tool/runner.js";
import { isStoreUnavailable, sqliteCode } from "../../store/health.js";
import type { MutationRuntime } from "./context.js";

/**
 * How long a mutation may wait, off the event loop, for a lock another process holds on the state file before it
 * is refused. Each try waits at most JOURNAL_BUSY_TIMEOUT_MS on the loop (store/database.ts); between tries the
 * loop serves everything else.
 */
export const ADMISSION_LOCK_WAIT_MS = 1000;
const ADMISSION_FIRST_RETRY_MS = 20;

/**
 * An intent that cannot be recorded must not run: without its record a hidden retry would run it again. So a
 * store that refuses the admission write answers a retryable failure before anything executes. A busy lock is
 * tried again with backoff for up to ADMISSION_LOCK_WAIT_MS; each try repeats the whole synchronous admission
 * (in-flight check, lookup, insert, launch), so a call that arrived meanwhile is joined, never admitted twice.
 */
export async function refuseWhenStoreFails(
  runtime: MutationRuntime,
  admit: () => Promise<RunOutcome> | RunOutcome,
): Promise<RunOutcome> {
  const deadline = performance.now() + ADMISSION_LOCK_WAIT_MS;
  for (let delay = ADMISSION_FIRST_RETRY_MS; ; delay *= 2) {
    let outcome: Promise<RunOutcome> | RunOutcome;
    try {
      outcome = admit();
    } catch (error) {
      if (!isStoreUnavailable(error)) throw error;
      const left = deadline - performance.now();
      if (sqliteCode(error) === "SQLITE_BUSY" && left > 0) {
        await sleep(Math.min(delay, left));
        continue;
      }
      runtime.store.journalHealth.refused(error);
      throw storeUnavailable(error);
    }
    runtime.store.journalHealth.succeeded();
    return outcome;
  }
}

/** Runs a journal write that precedes the tool's side effects; a store refusing it becomes state_store_unavailable. */
export function refusedBeforeEffects<T>(runtime: MutationRuntime, write: () => T): T {
  try {
    return write();
  } catch (error) {
    if (!isStoreUnavailable(error)) throw error;
    runtime.store.journalHealth.refused(error);
    throw storeUnavailable(error);
  }
}

/**
 * Waits for the journal's writes so far to reach stable storage (journal.ts durable()). It comes before the tool's
 * side effects, so an fsync that fails means nothing ran: state_store_unavailable, and the intent is withdrawn.
 */
export async function durableBeforeEffects(runtime: MutationRuntime): Promise<void> {
  try {
    await runtime.journal.durable();
  } catch (error) {
    throw syncRefused(runtime, error);
  }
}

export function syncRefused(runtime: MutationRuntime, error: unknown): ToolError {
  runtime.log.error("could not fsync the journal before a mutation ran; refusing it", {
    error: error instanceof Error ? error.message : String(error),
  });
  return new ToolError(
    ErrorCode.stateStoreUnavailable,
    "The bridge cannot make its journal durable right now (its state disk failed a sync), so nothing was run. Retry the same URL in a few seconds; the operator sees the cause in the log.",
    {
      detail: { store: (error as NodeJS.ErrnoException).code ?? "unknown" },
      retryable: true,
      agentAction: "wait_and_retry",
    },
  );
}

/** The one answer for "the journal could not be written, so nothing ran"; journal.ts withdraws such an intent. */
function storeUnavailable(error: unknown): ToolError {
  return new ToolError(
    ErrorCode.stateStoreUnavailable,
    "The bridge cannot write its journal right now (its state disk is full or locked), so nothing was run. Retry the same URL in a few seconds; the operator sees the cause in /api/health and the log.",
    {
      detail: { store: sqliteCode(error) ?? "unknown" },
      retryable: true,
      agentAction: "wait_and_retry",
    },
  );
}
