// Typed queries over the intent journal: intents, their patch preimages, and per-project state epochs.
import type { CapabilityText } from "./capability-text.js";
import { transactionRunner, type Db } from "./database.js";
import { identityOf, type IntentIdentity, type RawIntentIdentity } from "./intent-identity.js";

export type IntentState = "pending" | "running" | "succeeded" | "failed";

export interface IntentRow extends IntentIdentity {
  id: number;
  argsHash: string;
  state: IntentState;
  /** The recorded response body once finished; undefined while unfinished, and for a tombstone (finished, result dropped). */
  result: Record<string, unknown> | undefined;
  errorCode: string | null;
  checkpoint: unknown;
  /** Project state epoch right after this intent finished (its own bump included). */
  epochAfter: number | null;
  createdAt: number;
  startedAt: number | null;
  finishedAt: number | null;
}

export type PreimageKind = "file" | "absent" | "absent_dir";

/** One path as it was before an intent touched it: a file's bytes and mode, or the fact it did not exist. */
export interface Preimage {
  path: string;
  kind: PreimageKind;
  mode?: number;
  content?: Buffer;
}

export interface NewIntent extends IntentIdentity {
  argsHash: string;
  createdAt: number;
}

interface RawIntent extends RawIntentIdentity {
  id: number;
  args_hash: string;
  state: IntentState;
  result: string | null;
  error_code: string | null;
  checkpoint: string | null;
  epoch_after: number | null;
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
}

/** Stored text as it was recorded: the session generation's tokens back in place of their placeholders. */
function toIntent(r: RawIntent, text: CapabilityText): IntentRow {
  const reveal = (stored: string) => text.reveal(stored, r.session_id, r.generation);
  return {
    id: r.id,
    ...identityOf(r),
    argsHash: r.args_hash,
    state: r.state,
    result: r.result === null ? undefined : (JSON.parse(reveal(r.result)) as Record<string, unknown>),
    errorCode: r.error_code,
    checkpoint: r.checkpoint === null ? undefined : JSON.parse(reveal(r.checkpoint)),
    epochAfter: r.epoch_after,
    createdAt: r.created_at,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
  };
}

/** The row `admit` just inserted, as a read of it would return it. */
function newIntentRow(id: number, intent: NewIntent): IntentRow {
  return {
    id,
    sessionId: intent.sessionId,
    generation: intent.generation,
    projectId: intent.projectId,
    projectRoot: intent.projectRoot,
    callId: intent.callId,
    tool: intent.tool,
    argsHash: intent.argsHash,
    state: "pending",
    result: undefined,
    errorCode: null,
    checkpoint: undefined,
    epochAfter: null,
    createdAt: intent.createdAt,
    startedAt: null,
    finishedAt: null,
  };
}

/**
 * `text` conceals the session generation's capability tokens in every result and checkpoint written, and reveals
 * them in every row read (capability-text.ts): answers carry full URLs, the database and its backups never do.
 */
export function createJournalQueries(db: Db, text: CapabilityText) {
  const scopeOfStmt = db.prepare("SELECT session_id, generation FROM intents WHERE id = ?");
  /** JSON of `value` with the capability tokens of intent `id`'s session generation concealed. */
  const storedJson = (id: number, value: unknown): string => {
    const json = JSON.stringify(value ?? null);
    const scope = scopeOfStmt.get(id) as { session_id: string; generation: number } | undefined;
    return scope ? text.conceal(json, scope.session_id, scope.generation) : json;
  };
  const findStmt = db.prepare("SELECT * FROM intents WHERE session_id = ? AND generation = ? AND call_id = ?");
  const byIdStmt = db.prepare("SELECT * FROM intents WHERE id = ?");
  // The unique index on (session, generation, call id) is what makes admission exactly-once across processes.
  // Not INSERT ... RETURNING read with .get(): its commit happens as the statement is reset, where an error (SQLITE_FULL
  // on a full disk) goes unseen and an intent never written would look admitted (test/integration/store/disk-full.test.ts).
  const insertStmt = db.prepare(`INSERT INTO intents
    (session_id, generation, project_id, project_root, call_id, tool, args_hash, state, created_at)
    VALUES (@sessionId, @generation, @projectId, @projectRoot, @callId, @tool, @argsHash, 'pending', @createdAt)
    ON CONFLICT (session_id, generation, call_id) DO NOTHING`);
  const runningStmt = db.prepare(
    "UPDATE intents SET state = 'running', started_at = ? WHERE id = ? AND state = 'pending'",
  );
  const checkpointStmt = db.prepare("UPDATE intents SET checkpoint = ? WHERE id = ?");
  const finishStmt = db.prepare(
    "UPDATE intents SET state = @state, result = @result, error_code = @errorCode, epoch_after = @epochAfter, finished_at = @finishedAt, unconfirmed = @unconfirmed WHERE id = @id",
  );
  const confirmStmt = db.prepare("UPDATE intents SET unconfirmed = 0 WHERE id = ?");
  const unconfirmedStmt = db.prepare("SELECT * FROM intents WHERE unconfirmed = 1 ORDER BY id");
  // Only an intent refused by the store before anything of it ran can be withdrawn: an unfinished one, or one whose
  // success was recorded ahead of its side effect and is still unconfirmed (mutation/journal/journal.ts recordAhead).
  const withdrawStmt = db.prepare(
    "DELETE FROM intents WHERE id = ? AND (state IN ('pending', 'running') OR unconfirmed = 1)",
  );
  const unfinishedStmt = db.prepare("SELECT * FROM intents WHERE state IN ('pending', 'running') ORDER BY id");
  const clearPreimagesStmt = db.prepare("DELETE FROM intent_preimages WHERE intent_id = ?");
  const insertPreimageStmt = db.prepare(
    "INSERT INTO intent_preimages (intent_id, seq, path, kind, mode, content) VALUES (?, ?, ?, ?, ?, ?)",
  );
  const preimagesStmt = db.prepare(
    "SELECT path, kind, mode, content FROM intent_preimages WHERE intent_id = ? ORDER BY seq",
  );
  const epochStmt = db.prepare("SELECT epoch FROM project_epochs WHERE project_id = ?");
  const bumpEpochStmt = db.prepare(
    "INSERT INTO project_epochs (project_id, epoch) VALUES (?, 1) ON CONFLICT(project_id) DO UPDATE SET epoch = epoch + 1 RETURNING epoch",
  );
  const unbumpEpochStmt = db.prepare("UPDATE project_epochs SET epoch = epoch - 1 WHERE project_id = ? AND epoch = ?");
  // Past retention a finished intent becomes a tombstone: its result, checkpoint and preimages go, while its
  // identity, tool, outcome and time stay, so that a late replay is answered "already executed" and never re-run.
  const tombstoneOldStmt = db.prepare(
    "UPDATE intents SET result = NULL, checkpoint = NULL WHERE state IN ('succeeded', 'failed') AND result IS NOT NULL AND finished_at < ?",
  );
  const tombstoneSessionStmt = db.prepare(`UPDATE intents SET result = NULL, checkpoint = NULL
    WHERE session_id = @sessionId AND generation = @generation AND state IN ('succeeded', 'failed') AND result IS NOT NULL
    AND id <= (
      SELECT id FROM intents WHERE session_id = @sessionId AND generation = @generation AND state IN ('succeeded', 'failed')
      AND result IS NOT NULL ORDER BY id DESC LIMIT 1 OFFSET @keep)`);
  // Tombstones themselves are bounded per session generation; only past this bound is an identity forgotten.
  const dropTombstonesStmt = db.prepare(`DELETE FROM intents WHERE session_id = @sessionId AND generation = @generation
    AND state IN ('succeeded', 'failed') AND result IS NULL AND id <= (
      SELECT id FROM intents WHERE session_id = @sessionId AND generation = @generation AND state IN ('succeeded', 'failed')
      AND result IS NULL ORDER BY id DESC LIMIT 1 OFFSET @keepTombstones)`);
  // Rotation starts a clean journal: finished rows of generations a session has left are dropped.
  const pruneGenerationsStmt = db.prepare(`DELETE FROM intents WHERE state IN ('succeeded', 'failed')
    AND generation < (SELECT s.generation FROM sessions s WHERE s.id = intents.session_id)`);

  const finish = (
    id: number,
    state: "succeeded" | "failed",
    result: Record<string, unknown>,
    epochAfter: number | null,
    at: number,
    unconfirmed = false,
  ) => {
    finishStmt.run({
      id,
      state,
      result: storedJson(id, result),
      errorCode: typeof result.errorCode === "string" ? result.errorCode : null,
      epochAfter,
      finishedAt: at,
      unconfirmed: unconfirmed ? 1 : 0,
    });
    clearPreimagesStmt.run(id);
  };

  const inTransaction = transactionRunner(db);

  return {
    /** Runs fn inside one transaction on the journal's connection (not the main one: see openJournalConnection). */
    transaction: inTransaction,
    find: (sessionId: string, generation: number, callId: string): IntentRow | undefined => {
      const r = findStmt.get(sessionId, generation, callId) as RawIntent | undefined;
      return r && toIntent(r, text);
    },
    get: (id: number): IntentRow | undefined => {
      const r = byIdStmt.get(id) as RawIntent | undefined;
      return r && toIntent(r, text);
    },
    /** Admits an intent; returns the existing row instead when the call id is already known. */
    admit: (intent: NewIntent): { row: IntentRow; inserted: boolean } => {
      const info = insertStmt.run(intent);
      // A new row is what was just inserted: built here instead of read back (a SELECT and a parse less per intent).
      if (info.changes > 0) {
        // Its result may be written after a rotation ends the generation's tokens: keep them for concealing it.
        text.retain(intent.sessionId, intent.generation);
        return { row: newIntentRow(Number(info.lastInsertRowid), intent), inserted: true };
      }
      return {
        row: toIntent(findStmt.get(intent.sessionId, intent.generation, intent.callId) as RawIntent, text),
        inserted: false,
      };
    },
    markRunning: (id: number, at: number): void => {
      runningStmt.run(at, id);
    },
    saveCheckpoint: (id: number, data: unknown): void => {
      checkpointStmt.run(storedJson(id, data), id);
    },
    /** Marks a pending intent running (startedAt) and saves its checkpoint, in one transaction. */
    // The start folded into a checkpoint's (or the preimages') commit, for tools that record one before any side
    // effect (journal-runner.ts): one commit instead of two, and an intent that failed before it stays pending.
    startWithCheckpoint: db.transaction((id: number, data: unknown, startedAt: number) => {
      runningStmt.run(startedAt, id);
      checkpointStmt.run(storedJson(id, data), id);
    }) as (id: number, data: unknown, startedAt: number) => void,
    /**
     * Replaces the intent's preimages in one transaction, so recovery sees all of them or none; with startedAt, the
     * same transaction marks a pending intent running.
     */
    savePreimages: db.transaction((id: number, preimages: Preimage[], startedAt?: number) => {
      if (startedAt !== undefined) runningStmt.run(startedAt, id);
      clearPreimagesStmt.run(id);
      preimages.forEach((p, seq) => insertPreimageStmt.run(id, seq, p.path, p.kind, p.mode ?? null, p.content ?? null));
    }) as (id: number, preimages: Preimage[], startedAt?: number) => void,
    preimages: (id: number): Preimage[] =>
      (
        preimagesStmt.all(id) as Array<{
          path: string;
          kind: PreimageKind;
          mode: number | null;
          content: Buffer | null;
        }>
      ).map((r) => ({
        path: r.path,
        kind: r.kind,
        ...(r.mode === null ? {} : { mode: r.mode }),
        ...(r.content === null ? {} : { content: r.content }),
      })),
    /**
     * Records the outcome and drops the preimages; callers wrap it with the epoch bump in one `transaction`. An
     * `unconfirmed` outcome waits for confirm() (or start-up recovery) to be taken as final.
     */
    finish,
    /**
     * Removes an unfinished intent (and, by cascade, its preimages) that the store refused before anything of it
     * ran, so that the same call id can be admitted again once the store takes writes.
     */
    withdraw: (id: number): void => {
      withdrawStmt.run(id);
    },
    unfinished: (): IntentRow[] => (unfinishedStmt.all() as RawIntent[]).map((r) => toIntent(r, text)),
    /** Marks an outcome recorded ahead of its tool's side effect as confirmed (mutation/journal/journal.ts recordAhead). */
    confirm: (id: number): void => {
      confirmStmt.run(id);
    },
    /** Finished intents whose outcome was never confirmed: the process stopped between recording and answering. */
    unconfirmed: (): IntentRow[] => (unconfirmedStmt.all() as RawIntent[]).map((r) => toIntent(r, text)),
    epoch: (projectId: string): number => (epochStmt.get(projectId) as { epoch: number } | undefined)?.epoch ?? 0,
    bumpEpoch: (projectId: string): number => (bumpEpochStmt.get(projectId) as { epoch: number }).epoch,
    /** Takes back the bump that made the epoch `bumped`, if it is still the latest; true when it was. */
    unbumpEpoch: (projectId: string, bumped: number): boolean => unbumpEpochStmt.run(projectId, bumped).changes > 0,
    /**
     * Turns finished intents older than the cutoff, or beyond `keep` full records per session generation, into
     * tombstones, and drops the oldest tombstones beyond `keepTombstones`. Returns how many rows changed.
     */
    prune: (options: {
      /** Omitted: no pass over every session's records by age (it scans the whole table). */
      finishedBefore?: number;
      sessionId?: string;
      generation?: number;
      keep?: number;
      keepTombstones?: number;
    }): number => {
      let changed = options.finishedBefore === undefined ? 0 : tombstoneOldStmt.run(options.finishedBefore).changes;
      if (options.sessionId !== undefined && options.generation !== undefined) {
        const scope = { sessionId: options.sessionId, generation: options.generation };
        if (options.keep !== undefined) changed += tombstoneSessionStmt.run({ ...scope, keep: options.keep }).changes;
        if (options.keepTombstones !== undefined)
          changed += dropTombstonesStmt.run({ ...scope, keepTombstones: options.keepTombstones }).changes;
      }
      return changed;
    },
    pruneLeftGenerations: (): number => pruneGenerationsStmt.run().changes,
  };
}

export type JournalQueries = ReturnType<typeof createJournalQueries>;
