// blob status (/b): which chunks of a staged blob have arrived, which are missing, size and a short preview;
// without blob=, a list of this session's blobs.
import { z } from "zod";
import { ErrorCode, ToolError } from "../../errors.js";
import { defineTool } from "../../kernel/tool/definition.js";
import { runtimeOf } from "../journal/context.js";
import {
  BLOB_ID_PATTERN,
  blobStatus,
  blobStatusUrl,
  MAX_STAGED_BYTES_PER_SESSION,
  STAGED_IDLE_TTL_MS,
} from "./staging.js";

/** /b without blob=: this session's blobs. */
export const blobListOutput = z.strictObject({
  ok: z.literal(true),
  blobs: z.array(
    z.strictObject({
      blob: z.string(),
      count: z.number().int(),
      bytes: z.number().int(),
      statusUrl: z.string().describe("Exact /b URL of this blob's status."),
    }),
  ),
  totalBytes: z.number().int().describe("Bytes staged in this session."),
  limitBytes: z
    .number()
    .int()
    .describe("The session's staging budget; least recently used blobs are evicted beyond it."),
});

/** /b?blob=<id>: one blob's chunks. */
export const oneBlobOutput = blobStatus.extend({ ok: z.literal(true) });

/** What a successful /b answers: one blob's status (blob=), or the list. No discriminator field: `blob` vs `blobs`. */
export const blobStatusOutput = z.union([oneBlobOutput, blobListOutput]);
export type BlobStatusOutput = z.infer<typeof blobStatusOutput>;

export const blobStatusTool = defineTool({
  id: "blob_status",
  route: "b",
  longRoutes: ["blob", "blobs"],
  capability: "mutation",
  description: "Status of a staged blob (received and missing chunks, bytes, preview); without blob=, all blobs.",
  example: "/b?blob=feature",
  schema: z.object({ blob: z.string().regex(BLOB_ID_PATTERN, "blob ids use A-Z a-z 0-9 . _ - (1..64)").optional() }),
  output: blobStatusOutput,
  url: {},
  journal: { record: false },
  async execute(args, ctx) {
    const { staging } = runtimeOf(ctx);
    const scope = { sessionId: ctx.session.id, generation: ctx.session.generation };
    if (args.blob === undefined) {
      const blobs = staging.list(scope);
      return {
        ok: true,
        blobs: blobs.map((b) => ({
          blob: b.blob,
          count: b.count,
          bytes: b.bytes,
          statusUrl: blobStatusUrl(ctx.urls, b.blob),
        })),
        totalBytes: blobs.reduce((n, b) => n + b.bytes, 0),
        limitBytes: MAX_STAGED_BYTES_PER_SESSION,
      };
    }
    const status = staging.status(scope, args.blob);
    if (!status) {
      throw new ToolError(
        ErrorCode.stagedBlobNotFound,
        `No staged blob "${args.blob}" in this session (idle blobs expire after ${STAGED_IDLE_TTL_MS / 60000} minutes; a rotation clears them).`,
        {
          detail: { blob: args.blob },
          agentAction: "stage_content",
        },
      );
    }
    return { ok: true, ...status };
  },
});
