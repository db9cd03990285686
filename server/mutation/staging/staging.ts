// Staged content: immutable chunks addressed by (blob, index, content) in SQLite, scoped to one session
// generation. `resolveStagedContent` is the one way a tool turns blob= (+ count=) into text.
import { createHash } from "node:crypto";
import { z } from "zod";
import { ErrorCode, ToolError } from "../../errors.js";
import type { ExactUrls, ToolContext } from "../../kernel/tool/definition.js";
import { isStoreUnavailable, sqliteCode } from "../../store/health.js";
import type { Store } from "../../store/index.js";
import type { BlobKey, StagedBlobRow } from "../../store/staging.js";
import { MAX_RAW_BYTES } from "../../url-grammar/limits.js";
import { stagingPlan } from "../../url-grammar/staging-advice.js";

/** A chunk travels as raw=, so it holds what raw= may (its URL must also fit MAX_REQUEST_TARGET_BYTES). */
export const MAX_CHUNK_BYTES = MAX_RAW_BYTES;
export const MAX_CHUNKS_PER_BLOB = 64;
export const MAX_BLOB_BYTES = 160 * 1024;
export const MAX_BLOBS_PER_SESSION = 128;
export const MAX_STAGED_BYTES_PER_SESSION = 2 * 1024 * 1024;
export const STAGED_IDLE_TTL_MS = 30 * 60 * 1000;
export const BLOB_ID_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;
const PREVIEW_CHARS = 120;

export interface StagingScope {
  sessionId: string;
  generation: number;
}

export interface StageInput {
  blob: string;
  index: number;
  count: number;
  content: string;
}

const blobField = z
  .string()
  .describe("The blob id: consume it with blob=<id>&count=<count> on /w, /e (oldBlob/newBlob), /a or /x.");
const missingField = z.array(z.number().int()).describe("0-based indexes of the chunks still to stage with /s.");

/** What staging one chunk reports; /s answers it with ok, statusUrl and hint (server/mutation/staging/stage.ts). */
export const stageAck = z.strictObject({
  blob: blobField,
  index: z.number().int().describe("The chunk just staged (i=)."),
  count: z.number().int().describe("Chunks the blob was declared with; it never changes."),
  deduplicated: z.boolean().describe("True when this exact chunk was already staged: the replay changed nothing."),
  received: z.number().int().describe("How many of the blob's chunks are staged now."),
  missing: missingField,
  complete: z.boolean().describe("Every chunk is staged: the blob can be consumed."),
  bytes: z.number().int().describe("UTF-8 bytes staged for this blob so far."),
  evicted: z
    .array(z.string())
    .describe("Unrelated blobs dropped to stay within the session's limits; stage them again if still needed."),
});
export type StageAck = z.infer<typeof stageAck>;

/** One blob's status (/b?blob=<id>, with ok). */
export const blobStatus = z.strictObject({
  blob: blobField,
  count: z.number().int(),
  received: z.array(z.number().int()).describe("0-based indexes of the chunks staged, ascending."),
  missing: missingField,
  complete: z.boolean(),
  bytes: z.number().int(),
  preview: z
    .string()
    .describe(`The first ${PREVIEW_CHARS} characters of chunk 0 ("" until it arrives), to check what was staged.`),
  idleExpiresInSeconds: z.number().int().describe("The blob is dropped after this many seconds without use."),
});
export type BlobStatus = z.infer<typeof blobStatus>;

const digestOf = (text: string) => createHash("sha256").update(text).digest("hex");

export class Staging {
  constructor(
    private readonly store: Store,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Stores one chunk, or recognises its replay. Throws ToolError (without URLs) on every conflict or limit, and
   * state_store_unavailable when the state file refuses the write (disk full, a lock held elsewhere): nothing was
   * stored, and the same URL is safe to fetch again.
   */
  stage(scope: StagingScope, input: StageInput): StageAck {
    try {
      return this.stageInTransaction(scope, input);
    } catch (error) {
      if (!isStoreUnavailable(error)) throw error;
      throw new ToolError(
        ErrorCode.stateStoreUnavailable,
        "The bridge cannot write staged content right now (its state disk is full or locked), so this chunk was not stored. Fetch the same URL again in a few seconds; the operator sees the cause in /api/health.",
        {
          detail: { store: sqliteCode(error) ?? "unknown" },
          retryable: true,
          agentAction: "wait_and_retry",
        },
      );
    }
  }

  private stageInTransaction(scope: StagingScope, input: StageInput): StageAck {
    const { store } = this;
    return store.transaction(() => {
      const at = this.now();
      store.staging.expire(at - STAGED_IDLE_TTL_MS);
      const key: BlobKey = { ...scope, blob: input.blob };
      const bytes = Buffer.byteLength(input.content, "utf8");
      if (bytes > MAX_CHUNK_BYTES) {
        throw new ToolError(
          ErrorCode.stagedChunkTooLarge,
          `A chunk may hold ${MAX_CHUNK_BYTES} bytes; this one has ${bytes}. Split it into ${stagingPlan(bytes).count} chunks (~${stagingPlan(bytes).chunkBytes} bytes each) and raise count to match.`,
          {
            detail: { bytes, limit: MAX_CHUNK_BYTES },
            retryable: false,
          },
        );
      }
      const existing = store.staging.blob(key);
      const count = existing?.count ?? input.count;
      if (existing && existing.count !== input.count) throw countMismatch(input.blob, existing.count, input.count);
      if (input.index >= count) {
        throw new ToolError(
          ErrorCode.stagedIndexOutOfRange,
          `Blob "${input.blob}" has count=${count}, so i must be 0..${count - 1}; got ${input.index}.`,
          {
            detail: { blob: input.blob, index: input.index, count },
            retryable: false,
          },
        );
      }
      const digest = digestOf(input.content);
      const previous = existing ? store.staging.chunk(key, input.index) : undefined;
      if (previous) {
        if (previous.digest !== digest) {
          throw new ToolError(
            ErrorCode.stagedChunkConflict,
            `Chunk ${input.index} of blob "${input.blob}" is already staged with different content. Chunks are immutable: stage under a new blob id.`,
            {
              detail: { blob: input.blob, index: input.index, stagedBytes: previous.bytes, receivedBytes: bytes },
              retryable: false,
            },
          );
        }
        store.staging.touch(key, at);
        return this.ack(key, input.index, true, []);
      }
      if ((existing?.bytes ?? 0) + bytes > MAX_BLOB_BYTES) {
        throw new ToolError(
          ErrorCode.stagedBlobTooLarge,
          `Blob "${input.blob}" would exceed ${MAX_BLOB_BYTES} bytes. Split the change into several operations.`,
          {
            detail: { blob: input.blob, bytes: (existing?.bytes ?? 0) + bytes, limit: MAX_BLOB_BYTES },
            retryable: false,
          },
        );
      }
      const evicted = this.makeRoom(scope, input.blob, existing === undefined, bytes);
      if (!existing) store.staging.create(key, count, at);
      store.staging.addChunk(key, { index: input.index, content: input.content, bytes, digest }, at);
      return this.ack(key, input.index, false, evicted);
    });
  }

  status(scope: StagingScope, blob: string): BlobStatus | undefined {
    this.store.staging.expire(this.now() - STAGED_IDLE_TTL_MS);
    const key = { ...scope, blob };
    const row = this.store.staging.blob(key);
    if (!row) return undefined;
    const chunks = this.store.staging.chunks(key);
    const have = new Set(chunks.map((c) => c.index));
    const first = chunks.find((c) => c.index === 0);
    return {
      blob,
      count: row.count,
      received: [...have].sort((a, b) => a - b),
      missing: range(row.count).filter((i) => !have.has(i)),
      complete: have.size === row.count,
      bytes: row.bytes,
      preview: first ? first.content.slice(0, PREVIEW_CHARS) : "",
      idleExpiresInSeconds: Math.max(0, Math.round((row.lastUsedAt + STAGED_IDLE_TTL_MS - this.now()) / 1000)),
    };
  }

  list(scope: StagingScope): StagedBlobRow[] {
    this.store.staging.expire(this.now() - STAGED_IDLE_TTL_MS);
    return this.store.staging.list(scope.sessionId, scope.generation);
  }

  /**
   * The assembled text of a complete blob. `count`, when the consumer gives it, must equal the declared count.
   * Returns a failure description rather than throwing, so callers can attach exact URLs.
   */
  assemble(scope: StagingScope, blob: string, count: number | undefined): { text: string } | { error: ToolError } {
    const status = this.status(scope, blob);
    if (!status) {
      return {
        error: new ToolError(
          ErrorCode.stagedBlobNotFound,
          `No staged blob "${blob}" in this session (blobs expire after ${STAGED_IDLE_TTL_MS / 60000} idle minutes). Stage it with /s first.`,
          {
            detail: { blob },
            agentAction: "stage_content",
          },
        ),
      };
    }
    if (count !== undefined && count !== status.count) return { error: countMismatch(blob, status.count, count) };
    if (!status.complete) {
      return {
        error: new ToolError(
          ErrorCode.stagedBlobIncomplete,
          `Blob "${blob}" is missing chunk(s) ${status.missing.join(", ")} of ${status.count}. Stage them, then retry this URL.`,
          {
            detail: { blob, count: status.count, missing: status.missing, received: status.received },
            agentAction: "stage_content",
          },
        ),
      };
    }
    const key = { ...scope, blob };
    this.store.staging.touch(key, this.now());
    return {
      text: this.store.staging
        .chunks(key)
        .map((c) => c.content)
        .join(""),
    };
  }

  /** Drops blobs of generations their sessions have left (rotation starts clean) and idle ones. */
  sweep(): void {
    this.store.staging.pruneLeftGenerations();
    this.store.staging.expire(this.now() - STAGED_IDLE_TTL_MS);
  }

  private ack(key: BlobKey, index: number, deduplicated: boolean, evicted: string[]): StageAck {
    const row = this.store.staging.blob(key)!;
    const have = new Set(this.store.staging.chunks(key).map((c) => c.index));
    const missing = range(row.count).filter((i) => !have.has(i));
    return {
      blob: key.blob,
      index,
      count: row.count,
      deduplicated,
      received: have.size,
      missing,
      complete: missing.length === 0,
      bytes: row.bytes,
      evicted,
    };
  }

  /** Evicts the least recently used blobs other than `keep` until a new chunk (and maybe a new blob) fits. */
  private makeRoom(scope: StagingScope, keep: string, newBlob: boolean, bytes: number): string[] {
    const blobs = this.store.staging.list(scope.sessionId, scope.generation);
    let total = blobs.reduce((sum, b) => sum + b.bytes, 0);
    let countAfter = blobs.length + (newBlob ? 1 : 0);
    const evicted: string[] = [];
    for (const candidate of blobs) {
      if (total + bytes <= MAX_STAGED_BYTES_PER_SESSION && countAfter <= MAX_BLOBS_PER_SESSION) break;
      if (candidate.blob === keep) continue;
      this.store.staging.delete({ ...scope, blob: candidate.blob });
      total -= candidate.bytes;
      countAfter -= 1;
      evicted.push(candidate.blob);
    }
    return evicted;
  }
}

function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}

function countMismatch(blob: string, declared: number, got: number): ToolError {
  return new ToolError(
    ErrorCode.stagedCountMismatch,
    `Blob "${blob}" was declared with count=${declared}; got count=${got}. A declared count never changes: use count=${declared} or a new blob id.`,
    {
      detail: { blob, declared, received: got },
      retryable: false,
    },
  );
}

/** Exact /b URL for a blob. */
export function blobStatusUrl(urls: ExactUrls, blob: string): string {
  return urls.to("m", "b", [["blob", blob]]);
}

/**
 * Turns blob= (+ count=) into the assembled text for any mutation tool (write, edit, patch, terminal).
 * Throws staged_blob_not_found, or staged_blob_incomplete / staged_count_mismatch with an exact statusUrl.
 */
export function resolveStagedContent(ctx: ToolContext, blob: string, count: number | undefined): string {
  const staging = ctx.mutation?.staging;
  if (!staging)
    throw new ToolError(ErrorCode.internalError, "Staged content is only available to mutation tools.", {
      retryable: false,
    });
  const result = staging.assemble({ sessionId: ctx.session.id, generation: ctx.session.generation }, blob, count);
  if ("text" in result) return result.text;
  const e = result.error;
  throw new ToolError(e.code, e.message, {
    detail: e.detail,
    retryable: e.retryable,
    agentAction: e.agentAction,
    // A blob that does not exist has no status: its statusUrl would answer this same refusal (issue 27 item 3).
    ...(e.code === ErrorCode.stagedBlobNotFound ? {} : { extra: { statusUrl: blobStatusUrl(ctx.urls, blob) } }),
  });
}
