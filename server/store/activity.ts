// The activity log: one row per authenticated data-plane call, never tool content.
import type { CapabilityText } from "./capability-text.js";
import type { Db } from "./database.js";
import { diskStillFull } from "./health.js";

export const ACTIVITY_RETENTION_ROWS = 5000;
/** Rows are buffered and written together: one small transaction per burst instead of one per call. */
export const ACTIVITY_FLUSH_DELAY_MS = 50;
/** Rows kept in memory while the database refuses writes (disk full, a lock held elsewhere); older ones are dropped. */
export const ACTIVITY_MAX_PENDING = 2000;
/** Retry delays after a failed flush: doubling from the first to the last, then staying there. */
export const ACTIVITY_RETRY_MIN_MS = 250;
export const ACTIVITY_RETRY_MAX_MS = 5000;

/** How the activity log is faring; a failing log never stops a call, it only loses rows (counted here). */
export interface ActivityHealth {
  /** Rows waiting for the next successful flush. */
  pending: number;
  /** Rows dropped since start because the buffer was full while writes failed. */
  dropped: number;
  /** True from a failed flush until the next successful one, and while a disk that refused one is still full. */
  failing: boolean;
  lastError: { code: string; at: number } | null;
}

export interface ActivityEntry {
  id: number;
  sessionId: string;
  generation: number;
  at: number;
  route: string;
  tool: string | null;
  ok: boolean;
  errorCode: string | null;
  httpStatus: number;
  durationMs: number;
  callId: string | null;
  dedupe: string | null;
  /** Parameter names with secret-looking values redacted; content parameters are reduced to their length. */
  params: Record<string, string> | null;
}

export type NewActivity = Omit<ActivityEntry, "id">;

interface RawActivity {
  id: number;
  session_id: string;
  generation: number;
  at: number;
  route: string;
  tool: string | null;
  ok: number;
  error_code: string | null;
  http_status: number;
  duration_ms: number;
  call_id: string | null;
  dedupe: string | null;
  params: string | null;
}

/** `text` keeps the session generation's capability tokens out of the stored parameters and call ids (capability-text.ts). */
export function createActivityQueries(db: Db, text: CapabilityText) {
  const insertStmt = db.prepare(`INSERT INTO activity
    (session_id, generation, at, route, tool, ok, error_code, http_status, duration_ms, call_id, dedupe, params)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const listAllStmt = db.prepare("SELECT * FROM activity WHERE id > ? ORDER BY id DESC LIMIT ?");
  const listSessionStmt = db.prepare("SELECT * FROM activity WHERE session_id = ? AND id > ? ORDER BY id DESC LIMIT ?");
  const pruneStmt = db.prepare("DELETE FROM activity WHERE id <= (SELECT MAX(id) FROM activity) - ?");
  let insertsSincePrune = 0;
  /**
   * Rows waiting for the batch, their call id and parameters already concealed: concealed when recorded, while the
   * generation's tokens are still on record, not at the flush, which may come after a rotation ended them.
   */
  let pending: ConcealedActivity[] = [];
  let timer: NodeJS.Timeout | undefined;
  let dropped = 0;
  let failures = 0;
  let lastError: ActivityHealth["lastError"] = null;

  const writeBatch = db.transaction((rows: ConcealedActivity[]) => {
    // Positional binding: no per-row object to build and no parameter names to look up.
    for (const { entry: e, callId, params } of rows) {
      insertStmt.run(
        e.sessionId,
        e.generation,
        e.at,
        e.route,
        e.tool,
        e.ok ? 1 : 0,
        e.errorCode,
        e.httpStatus,
        e.durationMs,
        callId,
        e.dedupe,
        params,
      );
    }
    insertsSincePrune += rows.length;
    if (insertsSincePrune >= 100) {
      insertsSincePrune = 0;
      pruneStmt.run(ACTIVITY_RETENTION_ROWS);
    }
  });

  function schedule(delayMs: number): void {
    if (timer) return;
    timer = setTimeout(flush, delayMs);
    timer.unref();
  }

  /**
   * Writes buffered rows. Never throws: the activity log is an audit aid, and a store that refuses writes
   * (SQLITE_FULL, SQLITE_BUSY from another writer, an I/O error) must not take the bridge down with it. The
   * rows go back to the buffer, bounded by ACTIVITY_MAX_PENDING, and the flush is retried with backoff.
   */
  function flush(): void {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (pending.length === 0 || !db.open) return;
    const rows = pending;
    pending = [];
    try {
      writeBatch(rows);
      failures = 0;
    } catch (error) {
      failures += 1;
      lastError = { code: errorCode(error), at: Date.now() };
      pending = rows.concat(pending);
      const excess = pending.length - ACTIVITY_MAX_PENDING;
      if (excess > 0) {
        pending.splice(0, excess);
        dropped += excess;
      }
      schedule(Math.min(ACTIVITY_RETRY_MIN_MS * 2 ** (failures - 1), ACTIVITY_RETRY_MAX_MS));
    }
  }

  const reveal = (r: RawActivity, stored: string) => text.reveal(stored, r.session_id, r.generation);
  const toEntry = (r: RawActivity): ActivityEntry => ({
    id: r.id,
    sessionId: r.session_id,
    generation: r.generation,
    at: r.at,
    route: r.route,
    tool: r.tool,
    ok: r.ok === 1,
    errorCode: r.error_code,
    httpStatus: r.http_status,
    durationMs: r.duration_ms,
    callId: r.call_id === null ? null : reveal(r, r.call_id),
    dedupe: r.dedupe,
    params: r.params ? (JSON.parse(reveal(r, r.params)) as Record<string, string>) : null,
  });

  return {
    insert: (e: NewActivity): void => {
      const conceal = (stored: string | null) =>
        stored === null ? null : text.conceal(stored, e.sessionId, e.generation);
      pending.push({
        entry: e,
        callId: conceal(e.callId),
        params: conceal(e.params ? JSON.stringify(e.params) : null),
      });
      if (pending.length > ACTIVITY_MAX_PENDING) {
        pending.shift();
        dropped += 1;
      }
      schedule(ACTIVITY_FLUSH_DELAY_MS);
    },
    health: (): ActivityHealth => ({
      pending: pending.length,
      dropped,
      failing: failures > 0 || diskStillFull(lastError, db.name),
      lastError,
    }),
    /** Writes buffered rows now (before reading, and when the store closes). */
    flush,
    list: (opts: { sessionId?: string; afterId?: number; limit?: number }): ActivityEntry[] => {
      flush();
      const limit = Math.min(Math.max(opts.limit ?? 100, 1), 500);
      const after = opts.afterId ?? 0;
      const rows = (
        opts.sessionId ? listSessionStmt.all(opts.sessionId, after, limit) : listAllStmt.all(after, limit)
      ) as RawActivity[];
      return rows.map(toEntry);
    },
  };
}

export type ActivityQueries = ReturnType<typeof createActivityQueries>;

/** A recorded row as the batch writes it: its call id and parameters concealed (capability-text.ts). */
interface ConcealedActivity {
  entry: NewActivity;
  callId: string | null;
  params: string | null;
}

function errorCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : error instanceof Error ? error.name : "unknown";
}
