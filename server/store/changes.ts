// Typed queries over the review record (migration 008): which files each intent changed, before and after,
// with content-addressed bytes, and the pruning that keeps it inside its retention and size budget. A large side's
// bytes are staged in chunks ahead of the record (migration 011), so its transaction stores no megabytes.
import { createHash, randomUUID, webcrypto } from "node:crypto";
import type { CapabilitySealer } from "./capability-key.js";
import type { Db } from "./database.js";
import { identityOf, type IntentIdentity, type RawIntentIdentity } from "./intent-identity.js";

/** One side of a change: a file's content hash (sha256 hex), mode and size. Absent: the path held no file. */
export interface FileVersion {
  hash: string;
  mode: number | null;
  size: number;
}

/** A file one intent changed, as recorded before the change (bytes of both sides go to review_blobs). */
export interface NewFileChange {
  /** Canonical absolute path. */
  path: string;
  /** The other path of a move: the source on the destination's row, the destination on the source's. */
  moved?: string;
  /**
   * hash: the content's SHA-256 (hex) when the caller has it, computed off the event loop (else it is hashed here);
   * staged: where stageAhead put the content's sealed chunks (else it is sealed inside record's transaction).
   */
  before?: ChangeSide & { mode: number };
  after?: ChangeSide;
}

/** Chunks stageAhead wrote for one side: record() names them, discardStaged() drops them if it never does. */
export interface StagedContent {
  stage: string;
  /** The seal's iv | tag: with the chunks after it in order, sealBytes' form. */
  header: Buffer;
}

/**
 * A side's content. stored: stageAhead found this hash already in review_blobs, so nothing was sealed (record looks
 * again, as for every side, and seals it after all if pruning took it meanwhile).
 */
type ChangeSide = { mode?: number; content: Buffer; hash?: string; staged?: StagedContent; stored?: boolean };

/** Contents above this are staged ahead, in chunks (stageAhead); smaller ones sealed inside the record's transaction. */
export const SEAL_AHEAD_BYTES = 256 * 1024;

export interface ChangeAuthor extends IntentIdentity {
  intentId: number;
}

export interface FileChangeRow extends ChangeAuthor {
  id: number;
  seq: number;
  path: string;
  moved: string | null;
  before: FileVersion | undefined;
  after: FileVersion | undefined;
  /** True once the intent succeeded; a change whose intent failed or never finished is not in any change set. */
  applied: boolean;
  /** The bytes of both sides were dropped (retention or size budget): hashes and sizes remain. */
  detailDropped: boolean;
  createdAt: number;
}

interface RawChange extends RawIntentIdentity {
  id: number;
  intent_id: number;
  seq: number;
  path: string;
  moved: string | null;
  before_hash: string | null;
  before_mode: number | null;
  before_size: number | null;
  after_hash: string | null;
  after_mode: number | null;
  after_size: number | null;
  applied: number;
  detail_dropped: number;
  created_at: number;
}

/** The content hash the review record keys bytes by (its first 32 digits are the fingerprint reads show). */
export function contentHash(bytes: Buffer): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** contentHash through the thread pool (WebCrypto's digest), for contents too large to hash on the event loop. */
async function contentHashInPool(bytes: Buffer): Promise<string> {
  return Buffer.from(await webcrypto.subtle.digest("SHA-256", bytes)).toString("hex");
}

function versionOf(hash: string | null, mode: number | null, size: number | null): FileVersion | undefined {
  return hash === null ? undefined : { hash, mode, size: size ?? 0 };
}

/** A path whose sealed form no longer opens (the database restored without its capability key). */
export const UNREADABLE_PATH = "(sealed under another capability key)";

function rowOf(r: RawChange): FileChangeRow {
  return {
    id: r.id,
    intentId: r.intent_id,
    ...identityOf(r),
    seq: r.seq,
    path: r.path,
    moved: r.moved,
    before: versionOf(r.before_hash, r.before_mode, r.before_size),
    after: versionOf(r.after_hash, r.after_mode, r.after_size),
    applied: r.applied === 1,
    detailDropped: r.detail_dropped === 1,
    createdAt: r.created_at,
  };
}

/** What an intent's changes could not record, said in the change set (review_notices, migration 009). */
export interface ChangeNoticeRow {
  callId: string;
  tool: string;
  notice: string;
  createdAt: number;
}

/** How much the review record holds: rows, rows whose bytes were dropped, and the bytes of contents kept. */
export interface ReviewUsage {
  changes: number;
  dropped: number;
  bytes: number;
}

/** Most paths whose sealed form and key are kept for the next rows naming them. */
const SEALED_PATHS_KEPT = 1024;

/** Most rows one pruning step drops the detail of before it measures the size again. */
const PRUNE_STEP_ROWS = 64;

/**
 * On the journal's connection, so a change's applied flag is set in the very transaction its intent finishes in.
 * Paths and contents are kept sealed under the capability key (a file the agent names or writes may hold its own
 * capability URL, and none is kept at rest in the clear); `path_key`, a keyed digest, finds a path's later changes.
 */
export function createChangeQueries(
  db: Db,
  sealer: Pick<CapabilitySealer, "sealBytes" | "sealBytesInSlices" | "openBytes" | "digest">,
) {
  const sealText = (text: string) => sealer.sealBytes(Buffer.from(text, "utf8")).toString("base64");
  const openText = (stored: string) =>
    sealer.openBytes(Buffer.from(stored, "base64"))?.toString("utf8") ?? UNREADABLE_PATH;
  const keyOf = (path: string) => sealer.digest(`review path\n${path}`).toString("hex");
  // A path's sealed form and key, kept for the paths recorded lately: an agent edits the same few files again and
  // again, and sealing (a random iv, a cipher) and the keyed digest cost ~100 µs of the event loop a row. A sealed
  // form used twice tells no more than path_key already does (the two rows name the same path).
  const sealedPaths = new Map<string, { sealed: string; key: string }>();
  const sealedPath = (path: string) => {
    let known = sealedPaths.get(path);
    if (known === undefined) {
      if (sealedPaths.size >= SEALED_PATHS_KEPT) sealedPaths.clear();
      known = { sealed: sealText(path), key: keyOf(path) };
      sealedPaths.set(path, known);
    }
    return known;
  };
  const toChange = (r: RawChange): FileChangeRow =>
    rowOf({ ...r, path: openText(r.path), moved: r.moved === null ? null : openText(r.moved) });
  const insertBlobStmt = db.prepare(
    "INSERT OR IGNORE INTO review_blobs (hash, size, content, chunk_stage) VALUES (?, ?, ?, ?)",
  );
  const blobKnownStmt = db.prepare("SELECT 1 FROM review_blobs WHERE hash = ?").pluck();
  const insertChunkStmt = db.prepare("INSERT INTO review_blob_chunks (stage, seq, content) VALUES (?, ?, ?)");
  const chunksStmt = db.prepare("SELECT content FROM review_blob_chunks WHERE stage = ? ORDER BY seq").pluck();
  const dropStageStmt = db.prepare("DELETE FROM review_blob_chunks WHERE stage = ?");
  const dropUnnamedStmt = db.prepare(`DELETE FROM review_blob_chunks WHERE stage = @stage
    AND NOT EXISTS (SELECT 1 FROM review_blobs WHERE chunk_stage = @stage)`);
  const sweepStmt = db.prepare(`DELETE FROM review_blob_chunks WHERE stage NOT IN
    (SELECT chunk_stage FROM review_blobs WHERE chunk_stage IS NOT NULL)`);
  const insertStmt = db.prepare(`INSERT INTO file_changes
    (session_id, generation, project_id, project_root, intent_id, call_id, tool, seq, path, path_key, moved,
     before_hash, before_mode, before_size, after_hash, after_mode, after_size, created_at)
    VALUES (@sessionId, @generation, @projectId, @projectRoot, @intentId, @callId, @tool, @seq, @path, @pathKey, @moved,
     @beforeHash, @beforeMode, @beforeSize, @afterHash, @afterMode, @afterSize, @createdAt)`);
  const clearStmt = db.prepare("DELETE FROM file_changes WHERE intent_id = ?");
  const settleStmt = db.prepare("UPDATE file_changes SET applied = ? WHERE intent_id = ?");
  const sessionStmt = db.prepare(
    "SELECT * FROM file_changes WHERE session_id = ? AND applied = 1 AND id > ? ORDER BY id LIMIT ?",
  );
  const intentStmt = db.prepare("SELECT * FROM file_changes WHERE session_id = ? AND call_id = ? ORDER BY seq");
  const laterStmt = db.prepare("SELECT * FROM file_changes WHERE path_key = ? AND applied = 1 AND id > ? ORDER BY id");
  const blobStmt = db.prepare("SELECT content, chunk_stage AS stage FROM review_blobs WHERE hash = ?");
  const usageStmt = db.prepare(`SELECT
    (SELECT COUNT(*) FROM file_changes) AS changes,
    (SELECT COUNT(*) FROM file_changes WHERE detail_dropped = 1) AS dropped,
    (SELECT COALESCE(SUM(size), 0) FROM review_blobs) AS bytes`);
  const dropOldStmt = db.prepare(
    "UPDATE file_changes SET detail_dropped = 1 WHERE detail_dropped = 0 AND created_at < ?",
  );
  const dropOldestStmt = db.prepare(`UPDATE file_changes SET detail_dropped = 1 WHERE id IN
    (SELECT id FROM file_changes WHERE detail_dropped = 0 ORDER BY id LIMIT ?)`);
  // A blob stays while any row with its detail kept names it, as either side.
  const collectStmt = db.prepare(`DELETE FROM review_blobs WHERE hash NOT IN
    (SELECT before_hash FROM file_changes WHERE detail_dropped = 0 AND before_hash IS NOT NULL
     UNION SELECT after_hash FROM file_changes WHERE detail_dropped = 0 AND after_hash IS NOT NULL)`);
  const forgetStmt = db.prepare("DELETE FROM file_changes WHERE detail_dropped = 1 AND created_at < ?");
  const noticeStmt = db.prepare(`INSERT INTO review_notices (session_id, intent_id, call_id, tool, notice, created_at)
    VALUES (@sessionId, @intentId, @callId, @tool, @notice, @createdAt)`);
  const noticesStmt = db.prepare(
    "SELECT call_id AS callId, tool, notice, created_at AS createdAt FROM review_notices WHERE session_id = ? ORDER BY id",
  );
  const forgetNoticesStmt = db.prepare("DELETE FROM review_notices WHERE created_at < ?");

  const chunksOf = (stage: string) => chunksStmt.all(stage) as Buffer[];

  const record = db.transaction((author: ChangeAuthor, changes: NewFileChange[], at: number) => {
    clearStmt.run(author.intentId);
    changes.forEach((c, seq) => {
      const side = (v: ChangeSide | undefined) => {
        if (!v) return { hash: null, mode: null, size: null };
        const hash = v.hash ?? contentHash(v.content);
        if (v.staged) {
          // Already stored (the same bytes recorded meanwhile): its own chunks are not needed.
          if (insertBlobStmt.run(hash, v.content.length, v.staged.header, v.staged.stage).changes === 0)
            dropStageStmt.run(v.staged.stage);
        } else if (blobKnownStmt.get(hash) === undefined)
          // Sealed only when not stored yet: an edit's before is most often the previous edit's after.
          insertBlobStmt.run(hash, v.content.length, sealer.sealBytes(v.content), null);
        return { hash, mode: v.mode ?? null, size: v.content.length };
      };
      const before = side(c.before);
      const after = side(c.after);
      const path = sealedPath(c.path);
      insertStmt.run({
        ...author,
        seq,
        path: path.sealed,
        pathKey: path.key,
        moved: c.moved === undefined || c.moved === null ? null : sealText(c.moved),
        beforeHash: before.hash,
        beforeMode: before.mode,
        beforeSize: before.size,
        afterHash: after.hash,
        afterMode: after.mode,
        afterSize: after.size,
        createdAt: at,
      });
    });
  }) as (author: ChangeAuthor, changes: NewFileChange[], at: number) => void;

  /** A side's sealed chunks written ahead, a chunk a turn, each its own commit; or marked stored when it already is. */
  const stageSide = async <S extends ChangeSide>(v: S | undefined): Promise<S | undefined> => {
    if (v === undefined || v.staged !== undefined || v.content.length <= SEAL_AHEAD_BYTES) return v;
    // Hashed in the thread pool when the caller did not (apply_patch, terminal checkpoints).
    v = { ...v, hash: v.hash ?? (await contentHashInPool(v.content)) };
    if (blobKnownStmt.get(v.hash) !== undefined) return { ...v, stored: true };
    const stage = randomUUID();
    try {
      const header = await sealer.sealBytesInSlices(v.content, (slice, seq) => insertChunkStmt.run(stage, seq, slice));
      return { ...v, staged: { stage, header } };
    } catch (error) {
      dropStageStmt.run(stage);
      throw error;
    }
  };
  const discardStaged = (changes: NewFileChange[]): void => {
    for (const c of changes)
      for (const v of [c.before, c.after]) if (v?.staged) dropUnnamedStmt.run({ stage: v.staged.stage });
  };

  return {
    /**
     * The changes with their large contents staged ahead (stageSide), for record() to name: awaited before the
     * intent's synchronous record, so its transaction neither seals nor stores megabytes on the loop. A caller that
     * does not reach record() calls discardStaged; a crash in between leaves chunks no blob names, swept at open.
     */
    stageAhead: async (changes: NewFileChange[]): Promise<NewFileChange[]> => {
      const staged: NewFileChange[] = [];
      try {
        // One side after another: each is a chunk a turn, and together they would only take turns anyway.
        for (const c of changes) {
          const before = await stageSide(c.before);
          const after = await stageSide(c.after);
          staged.push({ ...c, ...(before ? { before } : {}), ...(after ? { after } : {}) });
        }
        return staged;
      } catch (error) {
        discardStaged(staged);
        throw error;
      }
    },
    /** Drops the chunks stageAhead wrote for changes that were not recorded (never those a recorded blob names). */
    discardStaged,
    /** Drops chunks no blob names: a staging cut short by a crash. Run when the store opens; returns how many. */
    sweepStaged: (): number => sweepStmt.run().changes,
    /** Records what an intent is about to change (not yet applied), replacing what it recorded before. */
    record,
    /** Records what the intent's changes could not record (shown in its session's change set whatever its outcome). */
    recordNotice: (author: ChangeAuthor, notice: string, at: number): void => {
      noticeStmt.run({
        sessionId: author.sessionId,
        intentId: author.intentId,
        callId: author.callId,
        tool: author.tool,
        notice,
        createdAt: at,
      });
    },
    /** A session's notices, oldest first. */
    noticesOf: (sessionId: string): ChangeNoticeRow[] => noticesStmt.all(sessionId) as ChangeNoticeRow[],
    /** Marks an intent's changes applied (it succeeded) or not (it failed); inside the intent's finishing transaction. */
    settle: (intentId: number, applied: boolean): void => {
      settleStmt.run(applied ? 1 : 0, intentId);
    },
    /** A session's applied changes after row `afterId`, oldest first, at most `limit`. */
    ofSession: (sessionId: string, afterId = 0, limit = -1): FileChangeRow[] =>
      (sessionStmt.all(sessionId, afterId, limit) as RawChange[]).map(toChange),
    /** Everything an intent of the session recorded, applied or not, in its own order. */
    ofIntent: (sessionId: string, callId: string): FileChangeRow[] =>
      (intentStmt.all(sessionId, callId) as RawChange[]).map(toChange),
    /** Applied changes to `path` (canonical: the same file whichever project names it) after row `afterId`, by anyone. */
    laterOn: (path: string, afterId: number): FileChangeRow[] =>
      (laterStmt.all(keyOf(path), afterId) as RawChange[]).map(toChange),
    /** The bytes of a recorded version (kept sealed), or undefined once dropped or sealed under another key. */
    blob: (hash: string): Buffer | undefined => {
      const row = blobStmt.get(hash) as { content: Buffer; stage: string | null } | undefined;
      if (!row) return undefined;
      const sealed = row.stage === null ? row.content : Buffer.concat([row.content, ...chunksOf(row.stage)]);
      return sealer.openBytes(sealed);
    },
    usage: (): ReviewUsage => usageStmt.get() as ReviewUsage,
    /**
     * Keeps the record inside its budget: bytes of changes older than `detailBefore` are dropped, then the oldest
     * rows' bytes until the contents fit `maxBytes`; rows older than `forgetBefore` with no bytes left go.
     * Returns how many rows lost their detail.
     */
    prune: (options: { detailBefore: number; maxBytes: number; forgetBefore: number }): number => {
      let dropped = db.transaction(() => {
        const n = dropOldStmt.run(options.detailBefore).changes;
        forgetStmt.run(options.forgetBefore);
        forgetNoticesStmt.run(options.forgetBefore);
        // Also collects what rows deleted with their session (ON DELETE CASCADE) left behind.
        collectStmt.run();
        return n;
      })();
      // One row first, then doubling: a small overrun drops little, a large one is caught up in few steps.
      for (let step = 1; (usageStmt.get() as ReviewUsage).bytes > options.maxBytes;) {
        const n = db.transaction(() => {
          const taken = dropOldestStmt.run(step).changes;
          collectStmt.run();
          return taken;
        })();
        if (n === 0) break;
        dropped += n;
        step = Math.min(2 * step, PRUNE_STEP_ROWS);
      }
      return dropped;
    },
  };
}

export type ChangeQueries = ReturnType<typeof createChangeQueries>;
