// write (/w): creates a file, or deliberately replaces a whole existing file the session has fully read in
// its current version. Replaced files keep their mode, encoding, BOM and newline style.
import { z } from "zod";
import { ErrorCode, ToolError } from "../../errors.js";
import { fingerprintBytes, readCoverage } from "../../kernel/read/read-coverage.js";
import { defineTool, type ToolContext } from "../../kernel/tool/definition.js";
import { readHeldFile } from "../../sandbox/fd-ops.js";
import { withHeldPathAsync, type HeldPath } from "../../sandbox/fd-walk.js";
import { intentOf } from "../journal/context.js";
import { journalControls } from "../journal/controls.js";
import { newlineStyleField, projectPathField, textEncodingField } from "./output-fields.js";
import { MAX_DIFF_CHARS, wholeFileDiff, type FileDiff } from "./edit-diff.js";
import { normalizeNewlines } from "./text-match.js";
import { requireAgentMay } from "./agent-permission.js";
import { refuseBackslashCreate } from "./backslash-path.js";
import { checkLane, commitSingleFile, confirmSingleFile, existingFileLane, recoverSingleFile } from "./single-file.js";
import { unseenLineReads } from "./unseen-reads.js";
import { BLOB_ID_PATTERN } from "../staging/staging.js";
import { convertNewlines, decodeExact, decodeLossy, detectNewlines, encodeText } from "../../text/index.js";
import { deriveRunNonce } from "../journal/call-id.js";

/** A content fingerprint as /r and stale_read show it (fingerprintBytes: 32 hex digits). */
const FINGERPRINT_PATTERN = /^[0-9a-f]{32}$/;

/** How many unseen byte ranges a stale_read error lists. */
const MAX_LISTED_RANGES = 8;

/** What a successful /w answers (before the journal's callId and state). */
export const writeOutput = z.strictObject({
  ok: z.literal(true),
  path: projectPathField,
  created: z
    .boolean()
    .describe("true: the file did not exist and was created; false: an existing file was replaced whole."),
  bytes: z.number().int().describe("The file's size in bytes now, in its encoding."),
  encoding: textEncodingField.describe(
    "The encoding written: a replaced file keeps its own (BOM included); new files, and files that did not decode exactly, are UTF-8.",
  ),
  newline: newlineStyleField.describe(
    "Newline style of the written text: a replaced file's content is converted to its dominant newline.",
  ),
  unchanged: z
    .literal(true)
    .optional()
    .describe("Present when the content equals the file's current bytes: nothing was written."),
  diff: z
    .string()
    .optional()
    .describe(
      `Unified diff from the replaced text (or nothing, for a created file) to the written one (newlines shown as \\n), at most ${MAX_DIFF_CHARS / 1024} KiB; absent for a binary or undecodable file replaced.`,
    ),
  diffTruncated: z.literal(true).optional().describe("The diff was clipped; read the file to see the rest."),
});
export type WriteOutput = z.infer<typeof writeOutput>;

export const writeTool = defineTool({
  id: "write",
  route: "w",
  longRoutes: ["write_file"],
  capability: "mutation",
  permission: "write",
  description: "Create a file, or replace a whole file you have fully read; content as raw= or blob=.",
  example: "/w?path=src/new.ts&raw=export const x = 1;~n",
  schema: z.object({
    path: z.string(),
    content: z.string().optional(),
    blob: z.string().regex(BLOB_ID_PATTERN).optional(),
    count: z.number().int().optional(),
    /** The fingerprint of the existing binary file this write replaces (as stale_read's repair and /r show it). */
    replaces: z.string().regex(FINGERPRINT_PATTERN).optional(),
    ...journalControls,
  }),
  output: writeOutput,
  url: { aliases: { file: "path", filePath: "path" }, rawField: "content" },
  journal: {
    stagedContent: [{ blob: "blob", count: "count", into: "content" }],
    recover: recoverSingleFile,
    confirm: confirmSingleFile,
    awaitsDurableItself: true,
    lane: existingFileLane,
  },
  execute(args, ctx) {
    return withHeldPathAsync(ctx.project.root, args.path, { creating: true }, (target) => {
      refuseBackslashCreate(ctx, args.path, target);
      return writeHeld(ctx, target, args.content ?? "", args.replaces);
    });
  },
});

async function writeHeld(
  ctx: ToolContext,
  target: HeldPath,
  content: string,
  replaces: string | undefined,
): Promise<WriteOutput> {
  checkLane(ctx, target);
  if (!target.exists) {
    requireAgentMay(ctx, target, "write");
    const bytes = Buffer.from(content, "utf8");
    const answer: WriteOutput = {
      ok: true,
      path: target.display,
      created: true,
      bytes: bytes.length,
      encoding: "utf-8",
      newline: detectNewlines(content).style,
      ...diffFields(wholeFileDiff(target.display, "", normalizeNewlines(content))),
    };
    await commitSingleFile(ctx, { target, bytes, previous: undefined }, answer);
    return answer;
  }
  const info = target.stats!;
  if (!info.isFile()) {
    throw new ToolError(ErrorCode.notAFile, `${target.display} is a directory; give a file path.`, {
      detail: { path: target.display },
      retryable: false,
    });
  }
  // Before the read checks: a file the agent may not change is refused whatever it has read of it.
  requireAgentMay(ctx, target, "write");
  const previous = await readHeldFile(target.fd!, info.size);
  if (decodeLossy(previous).kind === "binary") requireBinaryVersion(ctx, target, previous, replaces);
  else requireCompleteRead(ctx, target, previous);
  const decoded = decodeExact(previous);
  // Keep the file's encoding and dominant newline; a file we cannot decode exactly is replaced as plain UTF-8.
  const encoding = decoded.ok ? decoded.decoded.encoding : "utf-8";
  const text =
    decoded.ok && decoded.decoded.style !== "none" ? convertNewlines(content, decoded.decoded.newline) : content;
  const bytes = encodeText(text, encoding);
  const result: WriteOutput = {
    ok: true as const,
    path: target.display,
    created: false,
    bytes: bytes.length,
    encoding,
    newline: detectNewlines(text).style,
  };
  if (bytes.equals(previous)) return { ...result, unchanged: true };
  // The diff is of the text replaced and the text written (as decoded, newlines seen as \n); it is part of the
  // answer recorded with the checkpoint, ahead of the rename, so a replay shows the change that happened.
  if (decoded.ok)
    Object.assign(
      result,
      diffFields(wholeFileDiff(target.display, normalizeNewlines(decoded.decoded.text), normalizeNewlines(text))),
    );
  await commitSingleFile(ctx, { target, bytes, mode: info.mode & 0o7777, previous }, result);
  return result;
}

function diffFields(found: FileDiff | undefined): Pick<WriteOutput, "diff" | "diffTruncated"> {
  if (!found) return {};
  return { diff: found.diff, ...(found.truncated ? { diffTruncated: true as const } : {}) };
}

/**
 * A binary file has no text to read (/r shows only its size and fingerprint), so read coverage can never be
 * complete: instead the write names the version it replaces (replaces=<fingerprint>), a compare-and-swap that
 * never lands on a version the agent was not shown. stale_read's repair (and retry) carry the current fingerprint.
 */
function requireBinaryVersion(ctx: ToolContext, target: HeldPath, bytes: Buffer, replaces: string | undefined): void {
  const fingerprint = fingerprintBytes(bytes);
  if (replaces === fingerprint) return;
  const intent = intentOf(ctx);
  const retry = ctx.urls.repair({
    drop: ["replaces", "run", "call"],
    add: [
      ["replaces", fingerprint],
      ["run", deriveRunNonce(intent.callId, `replaces@${fingerprint}`)],
    ],
  });
  const changed = replaces === undefined ? "" : ` It changed since fingerprint ${replaces} (given as replaces=).`;
  throw new ToolError(
    ErrorCode.staleRead,
    `${target.display} is an existing binary file (${bytes.length} bytes, fingerprint ${fingerprint}); it has no text to read.${changed} To replace it whole with this content, fetch repair (the same as retry: it names this version with replaces=, so it replaces only this version).`,
    {
      detail: { path: target.display, size: bytes.length, binary: true, fingerprint },
      agentAction: "fetch_repair",
      ...(retry ? { repair: retry } : {}),
      extra: { read: ctx.urls.to("r", "r", [["path", target.display]]), ...(retry ? { retry } : {}) },
    },
  );
}

/** /w may replace an existing file only when every byte of its current version was returned to this session. */
function requireCompleteRead(ctx: ToolContext, target: HeldPath, bytes: Buffer): void {
  const coverage = readCoverage.of(ctx.state);
  const fingerprint = fingerprintBytes(bytes);
  if (coverage.isComplete(target.absolute, fingerprint)) return;
  const missing = coverage.missing(target.absolute, fingerprint, bytes.length);
  const unseen = missing.reduce((n, [s, e]) => n + (e - s), 0);
  const retry = intentOf(ctx).retryUrl();
  const listed = missing.slice(0, MAX_LISTED_RANGES);
  // The read URL asks for the unseen lines only; with several unseen stretches, reads lists one URL each.
  const lines = unseenLineReads(ctx, target.display, bytes, listed);
  const read = lines[0]?.read ?? ctx.urls.to("r", "r", [["path", target.display]]);
  const where =
    lines.length > 0
      ? ` Unseen: lines ${lines.map((l) => (l.from === l.to ? `${l.from}` : `${l.from}-${l.to}`)).join(", ")}.`
      : "";
  const fetch =
    lines.length > 1
      ? "Fetch each URL in reads (following every next)"
      : "Fetch read (follow every next URL until complete)";
  throw new ToolError(
    ErrorCode.staleRead,
    `${target.display} exists and ${unseen} of its ${bytes.length} current bytes were not returned to this session.${where} ${fetch}, then fetch retry. For a local change, /e or /a need no full read.`,
    {
      detail: {
        path: target.display,
        size: bytes.length,
        unseenBytes: unseen,
        unseenRanges: listed,
        ...(lines.length > 0 ? { unseenLines: lines.map((l): [number, number] => [l.from, l.to]) } : {}),
      },
      agentAction: "reread_then_retry",
      extra: { read, ...(lines.length > 1 ? { reads: lines.map((l) => l.read) } : {}), ...(retry ? { retry } : {}) },
    },
  );
}
