// stage (/s): stores one immutable chunk of a blob; write, edit, apply_patch and terminal consume the
// assembled blob with blob=<id> (+ count=<n>). Replays of the same chunk are no-ops; acks carry a statusUrl.
import { z } from "zod";
import { ErrorCode, ToolError } from "../../errors.js";
import { defineTool } from "../../kernel/tool/definition.js";
import { runtimeOf } from "../journal/context.js";
import { MAX_REQUEST_TARGET_BYTES } from "../../url-grammar/limits.js";
import { BLOB_ID_PATTERN, blobStatusUrl, MAX_CHUNK_BYTES, MAX_CHUNKS_PER_BLOB, stageAck } from "./staging.js";

/** What a successful /s answers: the staging acknowledgement, where to check the blob, and what to do next. */
export const stageOutput = stageAck.extend({
  ok: z.literal(true),
  statusUrl: z.string().describe("Exact /b URL of this blob: authoritative for which chunks arrived."),
  hint: z.string().describe("Complete: how to consume the blob; otherwise a reminder that this answer is a snapshot."),
});
export type StageOutput = z.infer<typeof stageOutput>;

export const stageTool = defineTool({
  id: "stage",
  route: "s",
  longRoutes: ["staging"],
  capability: "mutation",
  description: `Stage one chunk (up to ${MAX_CHUNK_BYTES / 1024} KiB, its URL up to ${MAX_REQUEST_TARGET_BYTES / 1024} KiB) of large content: blob id, index i, total count, content as raw=.`,
  example: "/s?blob=feature&i=0&count=3&raw=<chunk>",
  schema: z.object({
    blob: z.string().regex(BLOB_ID_PATTERN, "blob ids use A-Z a-z 0-9 . _ - (1..64)"),
    i: z.number().int(),
    count: z.number().int(),
    chunk: z.string(),
  }),
  output: stageOutput,
  url: { aliases: { index: "i" }, rawField: "chunk" },
  journal: { record: false },
  async execute(args, ctx) {
    if (args.count < 1 || args.count > MAX_CHUNKS_PER_BLOB) {
      throw new ToolError(
        ErrorCode.invalidParameter,
        `count must be 1..${MAX_CHUNKS_PER_BLOB} (chunks per blob); got ${args.count}. Use larger chunks (up to ${MAX_CHUNK_BYTES / 1024} KiB) or split the work.`,
        {
          detail: { parameter: "count", received: args.count, min: 1, max: MAX_CHUNKS_PER_BLOB },
          retryable: false,
        },
      );
    }
    if (args.i < 0) {
      throw new ToolError(
        ErrorCode.stagedIndexOutOfRange,
        `i is the 0-based chunk index, 0..${args.count - 1}; got ${args.i}.`,
        {
          detail: { blob: args.blob, index: args.i, count: args.count },
          retryable: false,
        },
      );
    }
    const { staging } = runtimeOf(ctx);
    const ack = staging.stage(
      { sessionId: ctx.session.id, generation: ctx.session.generation },
      {
        blob: args.blob,
        index: args.i,
        count: args.count,
        content: args.chunk,
      },
    );
    return {
      ok: true,
      ...ack,
      statusUrl: blobStatusUrl(ctx.urls, args.blob),
      ...(ack.complete
        ? { hint: `Blob complete: pass blob=${args.blob}&count=${ack.count} to /w, /e (oldBlob/newBlob), /a or /x.` }
        : { hint: "Snapshot: chunks may land in any order; statusUrl is authoritative." }),
    };
  },
});
