// Getting an intent's record onto stable storage: a journal write retried with backoff while the store refuses
// it (disk full, a lock held by another process), and the WAL's fsync after it, each logged when it gives up.
import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "../../log.js";
import { isStoreUnavailable } from "../../store/health.js";
import type { Store } from "../../store/index.js";
import type { IntentRow } from "../../store/journal.js";
import { loopIsSaturated } from "./inline-sync.js";

/** Delays between tries to record an outcome the store refused: doubling from the first to the last. */
const RECORD_RETRY_MIN_MS = 50;
const RECORD_RETRY_MAX_MS = 2000;

/**
 * Runs a journal write, retrying it with backoff on a timer while the store refuses it (disk full, a lock held
 * by another process) and is open; the flight stays registered meanwhile, so calls for it join instead of
 * admitting it again. Gives up, logged, on any other error.
 */
export async function recordDurably(
  store: Store,
  log: Logger,
  row: IntentRow,
  what: string,
  write: () => void,
): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    if (!store.db.open) {
      // Shutting down: start-up recovery settles the record as it was left, and never re-runs the intent.
      log.warn(
        `the state store closed before it could ${what} intent ${row.tool} ${row.callId}; start-up recovery settles it`,
      );
      return;
    }
    try {
      write();
      store.journalHealth.succeeded();
      if (attempt > 0) log.info(`the state store took the write again: could ${what} intent ${row.tool} ${row.callId}`);
      return;
    } catch (error) {
      if (!isStoreUnavailable(error)) {
        log.error(`could not ${what} intent ${row.tool} ${row.callId}`, {
          error: error instanceof Error ? error.message : String(error),
        });
        return;
      }
      store.journalHealth.refused(error);
      if (attempt === 0)
        log.warn(
          `the state store refused to ${what} intent ${row.tool} ${row.callId}; retrying until it takes writes`,
          {
            error: error instanceof Error ? error.message : String(error),
          },
        );
      await sleep(Math.min(RECORD_RETRY_MIN_MS * 2 ** attempt, RECORD_RETRY_MAX_MS));
    }
  }
}

/**
 * Makes every journal write so far durable (store/wal-sync.ts): inline on a saturated loop, where a trip through
 * the pool costs this answer a whole turn, else in the thread pool. A failed fsync is logged, not thrown.
 */
export async function durableOrLogged(
  store: Store,
  log: Logger,
  row: IntentRow,
  what: string,
  inFlight: number,
): Promise<void> {
  if (!store.db.open) return;
  try {
    if (loopIsSaturated(inFlight)) store.journalSync.durableSync();
    else await store.journalSync.durable();
  } catch (error) {
    // The record is in the WAL, so it survives the process dying; only a power loss now could lose it.
    log.error(`could not fsync the journal after recording ${what} intent ${row.tool} ${row.callId}`, {
      error: error instanceof Error ? error.message : String(error),
    });
  }
}
