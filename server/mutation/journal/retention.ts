// What the journal and the review record keep, and for how long: full records for a day, then tombstones, within
// per-session budgets (docs/PROTOCOL.md, retention); changed files' contents within the review budget
// (docs/PROTOCOL.md, "/c changes and /n revert", Retention). Pruned every PRUNE_EVERY_ADMISSIONS admissions, not on every
// call; what scans every row at most every SCAN_PRUNE_EVERY_MS.
import type { Store } from "../../store/index.js";
import type { IntentScope } from "./intent.js";

/** A finished intent's full result is kept this long; then it becomes a tombstone (docs/PROTOCOL.md, retention). */
export const JOURNAL_RETENTION_MS = 24 * 60 * 60 * 1000;
/** Beyond this many full records per session generation, the oldest become tombstones early (the size budget). */
export const JOURNAL_MAX_RECORDS_PER_SESSION = 2000;
/** Tombstones (identity, tool, outcome, time: ~150 bytes each) kept per session generation. */
export const JOURNAL_MAX_TOMBSTONES_PER_SESSION = 200_000;
/** Prune once every this many admissions, not on every call. */
export const PRUNE_EVERY_ADMISSIONS = 200;
/**
 * And what scans every row, no more often than this: the review record's prune (its collect reads every stored
 * change and content; it held the event loop ~13 ms, up to 46, each of the 41 times it ran in 30 s of the read-write
 * soak, issue 34) and the journal's tombstoning by age (no index on the finish time). Their budgets are a day or
 * more and hundreds of MiB, which a few seconds of writes do not move; a session's own budget is kept at every prune.
 */
export const SCAN_PRUNE_EVERY_MS = 10_000;

/** The review record's budget (URLBRIDGE_REVIEW_RETENTION_DAYS, URLBRIDGE_REVIEW_MAX_MB; docs/PROTOCOL.md, /c and /n). */
export interface ReviewBudget {
  /** Changed files' contents are kept this long; then only paths, hashes and sizes remain (detailDropped). */
  retentionMs: number;
  /** Past this many bytes of contents, the oldest changes' contents are dropped first. */
  maxBytes: number;
}
export const DEFAULT_REVIEW_BUDGET: ReviewBudget = {
  retentionMs: 7 * 24 * 60 * 60 * 1000,
  maxBytes: 256 * 1024 * 1024,
};
/** A change whose contents were dropped is itself forgotten this many retentions after it was made. */
const REVIEW_FORGET_AFTER_RETENTIONS = 4;

/**
 * Turns one session generation's surplus records into tombstones and drops its surplus tombstones; with `byAge`,
 * also every session's records past retention.
 */
export function pruneJournal(store: Store, scope: IntentScope, now: number, byAge: boolean): void {
  store.journal.prune({
    ...(byAge ? { finishedBefore: now - JOURNAL_RETENTION_MS } : {}),
    sessionId: scope.sessionId,
    generation: scope.generation,
    keep: JOURNAL_MAX_RECORDS_PER_SESSION,
    keepTombstones: JOURNAL_MAX_TOMBSTONES_PER_SESSION,
  });
}

/** Keeps the review record inside its budget (older contents dropped first, and marked so). */
export function pruneReview(store: Store, review: ReviewBudget, now: number): number {
  return store.changes.prune({
    detailBefore: now - review.retentionMs,
    maxBytes: review.maxBytes,
    forgetBefore: now - review.retentionMs * REVIEW_FORGET_AFTER_RETENTIONS,
  });
}
