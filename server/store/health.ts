// Whether the state file takes writes on the main (journal) connection: which SQLite errors mean "not now" (disk
// full, a lock held by another process, I/O), the last such failure, and a probe that clears it once writes work.
import fs from "node:fs";
import path from "node:path";
import type { ActivityHealth } from "./activity.js";
import type { Db } from "./database.js";

/** SQLite result codes that mean "the state file cannot take a write now", not a bug: disk full, locked, I/O. */
const STORE_UNAVAILABLE = /^SQLITE_(FULL|BUSY|LOCKED|IOERR|READONLY|CANTOPEN|PROTOCOL)/;
/** Probe delays while the journal connection is failing: doubling from the first to the last, then staying there. */
export const JOURNAL_PROBE_MIN_MS = 250;
export const JOURNAL_PROBE_MAX_MS = 5000;
/**
 * Free space the state file's folder needs before a store writer that failed for a full disk counts as taking writes
 * again. Its next small write alone says little there: it lands in WAL space a checkpoint (issue 34: a worker, every
 * 250 ms) lets SQLite reuse, so it succeeds on a disk that still has no room for a mutation's record.
 */
export const JOURNAL_FULL_RECOVERY_FREE_BYTES = 1024 * 1024;

/** True for an error the store raises while it cannot take a write (worth retrying later, never a bug). */
export function isStoreUnavailable(error: unknown): boolean {
  return STORE_UNAVAILABLE.test(sqliteCode(error) ?? "");
}

/** The SQLite result code of an error (SQLITE_FULL, SQLITE_BUSY, ...), or undefined for any other error. */
export function sqliteCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.startsWith("SQLITE_") ? code : undefined;
}

/** What /api/health says about the state store (`degraded` at its top level is the same flag). */
export interface StoreHealth {
  degraded: boolean;
  activityLog: ActivityHealth;
  journal: JournalHealth;
}

export interface JournalHealth {
  /** True from a refused journal write until a later write or probe succeeds, and while a full disk stays full. */
  failing: boolean;
  /** Journal writes refused since start (each one answered state_store_unavailable or retried). */
  refused: number;
  lastError: { code: string; at: number } | null;
}

/**
 * Tracks the journal connection's writes. A failure starts a probe on a timer (one tiny write transaction, with
 * backoff) so that the state clears by itself once the disk has space again or the lock is released, also when
 * no mutation arrives to try.
 */
export function createJournalHealth(db: Db, now: () => number = Date.now) {
  let failures = 0;
  let refused = 0;
  let lastError: JournalHealth["lastError"] = null;
  let timer: NodeJS.Timeout | undefined;

  // Rewrites the header's user_version with its own value: a real page write through the WAL, changing nothing.
  const probe = () => {
    timer = undefined;
    if (!db.open || failures === 0) return;
    try {
      const version = db.pragma("user_version", { simple: true }) as number;
      db.pragma(`user_version = ${version}`);
      failures = 0;
    } catch (error) {
      failed(error);
    }
  };

  function failed(error: unknown): void {
    failures += 1;
    lastError = { code: sqliteCode(error) ?? "unknown", at: now() };
    if (timer || !db.open) return;
    timer = setTimeout(probe, Math.min(JOURNAL_PROBE_MIN_MS * 2 ** (failures - 1), JOURNAL_PROBE_MAX_MS));
    timer.unref();
  }

  return {
    /** Records a refused journal write (an error for which isStoreUnavailable is true). */
    refused: (error: unknown): void => {
      refused += 1;
      failed(error);
    },
    /** Records a journal write that went through. */
    succeeded: (): void => {
      failures = 0;
    },
    health: (): JournalHealth => ({ failing: failures > 0 || diskStillFull(lastError, db.name), refused, lastError }),
    stop: (): void => {
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
  };
}

/**
 * True while the last refusal was a full disk and the state file's folder still has less than
 * JOURNAL_FULL_RECOVERY_FREE_BYTES free: a writer counts as failing then even if its last small write went through.
 */
export function diskStillFull(lastError: { code: string } | null, file: string): boolean {
  return lastError?.code === "SQLITE_FULL" && !roomToWrite(file);
}

/** Whether the file system holding `file` has JOURNAL_FULL_RECOVERY_FREE_BYTES free (true where it cannot say). */
function roomToWrite(file: string): boolean {
  try {
    const s = fs.statfsSync(path.dirname(file));
    return s.bavail * s.bsize >= JOURNAL_FULL_RECOVERY_FREE_BYTES;
  } catch {
    return true;
  }
}

export type JournalHealthTracker = ReturnType<typeof createJournalHealth>;
