// Typed queries over staged content: blobs (declared chunk count, size, last use) and their immutable chunks.
import type { CapabilityText } from "./capability-text.js";
import type { Db } from "./database.js";

export interface StagedBlobRow {
  blob: string;
  count: number;
  bytes: number;
  createdAt: number;
  lastUsedAt: number;
}

export interface StagedChunkRow {
  index: number;
  content: string;
  bytes: number;
  digest: string;
}

export interface BlobKey {
  sessionId: string;
  generation: number;
  blob: string;
}

interface RawBlob {
  blob: string;
  count: number;
  bytes: number;
  created_at: number;
  last_used_at: number;
}

const toBlob = (r: RawBlob): StagedBlobRow => ({
  blob: r.blob,
  count: r.count,
  bytes: r.bytes,
  createdAt: r.created_at,
  lastUsedAt: r.last_used_at,
});

/** `text` keeps the session generation's capability tokens out of staged content at rest (capability-text.ts). */
export function createStagingQueries(db: Db, text: CapabilityText) {
  const blobStmt = db.prepare("SELECT * FROM staged_blobs WHERE session_id = ? AND generation = ? AND blob = ?");
  const listStmt = db.prepare(
    "SELECT * FROM staged_blobs WHERE session_id = ? AND generation = ? ORDER BY last_used_at, created_at, blob",
  );
  const createStmt = db.prepare(
    "INSERT INTO staged_blobs (session_id, generation, blob, count, bytes, created_at, last_used_at) VALUES (?, ?, ?, ?, 0, ?, ?)",
  );
  const chunksStmt = db.prepare(
    "SELECT idx, content, bytes, digest FROM staged_chunks WHERE session_id = ? AND generation = ? AND blob = ? ORDER BY idx",
  );
  const chunkStmt = db.prepare(
    "SELECT idx, content, bytes, digest FROM staged_chunks WHERE session_id = ? AND generation = ? AND blob = ? AND idx = ?",
  );
  const insertChunkStmt = db.prepare(
    "INSERT INTO staged_chunks (session_id, generation, blob, idx, content, bytes, digest) VALUES (?, ?, ?, ?, ?, ?, ?)",
  );
  const addBytesStmt = db.prepare(
    "UPDATE staged_blobs SET bytes = bytes + ?, last_used_at = ? WHERE session_id = ? AND generation = ? AND blob = ?",
  );
  const touchStmt = db.prepare(
    "UPDATE staged_blobs SET last_used_at = ? WHERE session_id = ? AND generation = ? AND blob = ?",
  );
  const deleteStmt = db.prepare("DELETE FROM staged_blobs WHERE session_id = ? AND generation = ? AND blob = ?");
  const expireStmt = db.prepare("DELETE FROM staged_blobs WHERE last_used_at < ?");
  const leftGenerationsStmt = db.prepare(
    "DELETE FROM staged_blobs WHERE generation < (SELECT s.generation FROM sessions s WHERE s.id = staged_blobs.session_id)",
  );

  const toChunk = (k: BlobKey, r: { idx: number; content: string; bytes: number; digest: string }): StagedChunkRow => ({
    index: r.idx,
    content: text.reveal(r.content, k.sessionId, k.generation),
    bytes: r.bytes,
    digest: r.digest,
  });

  return {
    blob: (k: BlobKey): StagedBlobRow | undefined => {
      const r = blobStmt.get(k.sessionId, k.generation, k.blob) as RawBlob | undefined;
      return r && toBlob(r);
    },
    /** The session generation's blobs, least recently used first. */
    list: (sessionId: string, generation: number): StagedBlobRow[] =>
      (listStmt.all(sessionId, generation) as RawBlob[]).map(toBlob),
    create: (k: BlobKey, count: number, at: number): void => {
      createStmt.run(k.sessionId, k.generation, k.blob, count, at, at);
    },
    chunks: (k: BlobKey): StagedChunkRow[] =>
      (
        chunksStmt.all(k.sessionId, k.generation, k.blob) as Array<{
          idx: number;
          content: string;
          bytes: number;
          digest: string;
        }>
      ).map((r) => toChunk(k, r)),
    chunk: (k: BlobKey, index: number): StagedChunkRow | undefined => {
      const r = chunkStmt.get(k.sessionId, k.generation, k.blob, index) as
        { idx: number; content: string; bytes: number; digest: string } | undefined;
      return r && toChunk(k, r);
    },
    addChunk: (k: BlobKey, chunk: StagedChunkRow, at: number): void => {
      insertChunkStmt.run(
        k.sessionId,
        k.generation,
        k.blob,
        chunk.index,
        text.conceal(chunk.content, k.sessionId, k.generation),
        chunk.bytes,
        chunk.digest,
      );
      addBytesStmt.run(chunk.bytes, at, k.sessionId, k.generation, k.blob);
    },
    touch: (k: BlobKey, at: number): void => {
      touchStmt.run(at, k.sessionId, k.generation, k.blob);
    },
    delete: (k: BlobKey): void => {
      deleteStmt.run(k.sessionId, k.generation, k.blob);
    },
    /** Drops every blob idle since before the cutoff, in every session. */
    expire: (before: number): number => expireStmt.run(before).changes,
    pruneLeftGenerations: (): number => leftGenerationsStmt.run().changes,
  };
}

export type StagingQueries = ReturnType<typeof createStagingQueries>;
