// /z: replays a stored response in small parts (or an offset/length window) as plain text,
// each part opening with one URLBRIDGE_RANGE {json} metadata line.
import { z } from "zod";
import { ErrorCode, ToolError } from "../errors.js";
import type { SessionState } from "../kernel/tool/session-state.js";
import { validateInput } from "../kernel/tool/validate-input.js";
import { bindQueryInput } from "../url-grammar/bind.js";
import {
  alignToCharStart,
  RANGE_METADATA_PREFIX,
  RANGE_PART_BYTES,
  sliceByOffset,
  sliceByPart,
} from "../url-grammar/range-replay.js";
import { editRequestUrl, type RequestUrl } from "../url-grammar/request-url.js";

const rangeSchema = z.object({
  last: z.boolean().optional(),
  id: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,32}$/)
    .optional(),
  part: z.number().int().min(0).max(100_000).optional(),
  offset: z.number().int().min(0).optional(),
  length: z
    .number()
    .int()
    .min(1)
    .max(64 * 1024)
    .optional(),
});

type RangeArgs = z.infer<typeof rangeSchema>;

/** Returns the plain-text range response or throws a ToolError. */
export function serveRange(url: RequestUrl, state: SessionState, baseUrl: string): string {
  const candidate = bindQueryInput({ schema: rangeSchema, binding: {}, url });
  const args = validateInput<RangeArgs>(rangeSchema, candidate, {
    example: "/z?last=1&part=0",
    repair: (edit) => editRequestUrl(url, edit),
  });
  if (args.last && args.id) {
    throw new ToolError(ErrorCode.conflictingParameters, "Use last=1 or id=<responseId>, not both.", {
      detail: { parameters: ["last", "id"] },
    });
  }
  if (!args.last && !args.id) {
    throw new ToolError(ErrorCode.missingParameter, "Say which response: last=1 or id=<responseId>.", {
      repair: url.query.segments.length === 0 ? `${baseUrl}/z?last=1&part=0` : undefined,
    });
  }
  const byOffset = args.offset !== undefined || args.length !== undefined;
  if (byOffset && args.part !== undefined) {
    throw new ToolError(ErrorCode.conflictingParameters, "Use part=N or offset=&length=, not both.", {
      detail: { parameters: ["part", "offset", "length"] },
    });
  }
  if (byOffset && args.offset === undefined) {
    throw new ToolError(
      ErrorCode.missingParameter,
      "length needs offset=<byte> beside it (offset alone reads one part's worth from there).",
      {
        detail: { parameters: ["offset", "length"] },
      },
    );
  }
  // offset alone: the bytes a reader still lacks, one part's worth at a time (rangeFallback.resume + bytes held).
  const length = args.length ?? RANGE_PART_BYTES;

  const found = args.last
    ? state.snapshots.last()
    : args.id
      ? { id: args.id, body: state.snapshots.get(args.id) }
      : undefined;
  if (!found?.body) {
    throw new ToolError(
      ErrorCode.snapshotNotFound,
      "No stored response with that id (responses are kept 15 minutes, newest 96). Re-run the original read; mutations can be polled with /j.",
      {
        retryable: false,
      },
    );
  }
  const { id, body } = found as { id: string; body: Buffer };
  const slice = byOffset
    ? sliceByOffset(body, args.length === undefined ? alignToCharStart(body, args.offset!) : args.offset!, length)
    : sliceByPart(body, args.part ?? 0);
  if (!slice) {
    throw new ToolError(ErrorCode.rangeOutOfBounds, `That range is past the end of the ${body.length}-byte response.`, {
      detail: { total: body.length },
      repair: `${baseUrl}/z?id=${id}&part=0`,
    });
  }
  const end = slice.offset + slice.length;
  const next = slice.hasMore
    ? slice.part !== undefined
      ? `${baseUrl}/z?id=${id}&part=${slice.part + 1}`
      : `${baseUrl}/z?id=${id}&offset=${end}${args.length !== undefined ? `&length=${args.length}` : ""}`
    : undefined;
  const meta = {
    id,
    ...(slice.part !== undefined ? { part: slice.part, parts: slice.parts } : {}),
    offset: slice.offset,
    length: slice.length,
    total: body.length,
    hasMore: slice.hasMore,
    ...(next ? { next } : {}),
  };
  return `${RANGE_METADATA_PREFIX}${JSON.stringify(meta)}\n${body.subarray(slice.offset, end).toString("utf8")}`;
}
