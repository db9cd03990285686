// write (/w): creates a file, or deliberately replaces a whole existing file the session has fully read in
// its current version. Replaced files keep their mode, encoding, BOM and newline style.
import fs from "node:fs/promises";
import { z } from "zod";
import { ErrorCode, ToolError } from "../errors.js";
import { fingerprintBytes, readCoverageOf } from "../kernel/read-coverage.js";
import { defineTool, type ToolContext } from "../kernel/tool.js";
import { resolveInsideRoot, type ResolvedPath } from "../sandbox/paths.js";
import { intentOf } from "./context.js";
import { journalControls } from "./controls.js";
import { commitSingleFile, recoverSingleFile } from "./single-file.js";
import { BLOB_ID_PATTERN } from "./staging.js";
import { convertNewlines, decodeText, detectNewlines, encodeText } from "./text-codec.js";

/** How many unseen byte ranges a stale_read error lists. */
const MAX_LISTED_RANGES = 8;

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
    ...journalControls,
  }),
  url: { aliases: { file: "path" }, rawField: "content" },
  journal: { stagedContent: [{ blob: "blob", count: "count", into: "content" }], recover: recoverSingleFile },
  async execute(args, ctx) {
    const content = args.content ?? "";
    const target = resolveInsideRoot(ctx.project.root, args.path);
    if (!target.exists) {
      const bytes = Buffer.from(content, "utf8");
      await commitSingleFile(ctx, { absolute: target.absolute, bytes, previous: undefined });
      return { ok: true, path: target.display, created: true, bytes: bytes.length, encoding: "utf-8", newline: detectNewlines(content).style };
    }
    const info = await fs.stat(target.absolute);
    if (!info.isFile()) {
      throw new ToolError(ErrorCode.notAFile, `${target.display} is a directory; give a file path.`, { detail: { path: target.display }, retryable: false });
    }
    const previous = await fs.readFile(target.absolute);
    requireCompleteRead(ctx, target, previous);
    const decoded = decodeText(previous);
    // Keep the file's encoding and dominant newline; a file we cannot decode exactly is replaced as plain UTF-8.
    const encoding = decoded.ok ? decoded.decoded.encoding : "utf-8";
    const text = decoded.ok && decoded.decoded.style !== "none" ? convertNewlines(content, decoded.decoded.newline) : content;
    const bytes = encodeText(text, encoding);
    const result = { ok: true as const, path: target.display, created: false, bytes: bytes.length, encoding, newline: detectNewlines(text).style };
    if (bytes.equals(previous)) return { ...result, unchanged: true };
    await commitSingleFile(ctx, { absolute: target.absolute, bytes, mode: info.mode & 0o7777, previous });
    return result;
  },
});

/** /w may replace an existing file only when every byte of its current version was returned to this session. */
function requireCompleteRead(ctx: ToolContext, target: ResolvedPath, bytes: Buffer): void {
  const coverage = readCoverageOf(ctx.state);
  const fingerprint = fingerprintBytes(bytes);
  if (coverage.isComplete(target.absolute, fingerprint)) return;
  const missing = coverage.missing(target.absolute, fingerprint, bytes.length);
  const unseen = missing.reduce((n, [s, e]) => n + (e - s), 0);
  const retry = intentOf(ctx).retryUrl();
  throw new ToolError(
    ErrorCode.staleRead,
    `${target.display} exists and ${unseen} of its ${bytes.length} current bytes were not returned to this session. Fetch read (follow every next URL until complete), then fetch retry. For a local change, /e or /a need no full read.`,
    {
      detail: { path: target.display, size: bytes.length, unseenBytes: unseen, unseenRanges: missing.slice(0, MAX_LISTED_RANGES) },
      agentAction: "reread_then_retry",
      extra: { read: ctx.urls.to("r", "r", [["path", target.display]]), ...(retry ? { retry } : {}) },
    },
  );
}
