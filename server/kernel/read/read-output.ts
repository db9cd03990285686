// What a successful /r answers, as zod schemas: MCP publishes them as the read tool's outputSchema, and the
// result types read-result.ts builds are inferred from them, so a renamed or dropped field fails the build.
import { z } from "zod";
import { TEXT_ENCODINGS } from "../../text/index.js";
import { directoryEntry } from "./read-directory.js";

const lineNumber = z.number().int().min(0);
const nextUrl = z.string().describe("Exact URL of the next page of this path; fetch it as given, never rebuild it.");
const fingerprint = z
  .string()
  .describe(
    "Content fingerprint (32 hex characters of the SHA-256 of the bytes on disk); the same file unchanged always shows the same value.",
  );

export const readFileEntry = z.strictObject({
  path: z.string().describe("The file in /project/... form."),
  kind: z.literal("file"),
  encoding: z
    .enum(TEXT_ENCODINGS)
    .describe(
      "Encoding on disk (the -no-bom UTF-16 ones are guessed from the bytes); content is always shown as text whatever it is.",
    ),
  newline: z
    .enum(["lf", "crlf", "cr", "mixed", "none"])
    .describe("Newline style of the whole file; content keeps the file's own newlines."),
  size: z.number().int().min(0).describe("File size in bytes on disk."),
  fingerprint,
  totalLines: lineNumber.describe("Lines in the whole file, counted by \\n (0 for an empty file)."),
  startLine: z.number().int().min(1).describe("1-based first line of content."),
  endLine: lineNumber.describe(
    "Last line content reaches, fully or in part; startLine - 1 when nothing was returned (empty file).",
  ),
  startCol: z
    .number()
    .int()
    .min(2)
    .optional()
    .describe("Present when content continues a split line: the 1-based character column it starts at."),
  content: z.string().describe("The exact text of lines startLine..endLine, newlines included."),
  complete: z
    .boolean()
    .describe(
      "true: content is the whole file, first byte to last; false: it is part of the file (a limit=, lines= or offset= range, or a page that stopped short).",
    ),
  rangeComplete: z
    .boolean()
    .describe(
      "true: the requested range was returned to its end; false: the page stopped short, follow next for the rest.",
    ),
  truncated: z
    .literal(true)
    .optional()
    .describe(
      "Present exactly when the page stopped short of the requested range (rangeComplete false, next present).",
    ),
  invalidUtf8: z
    .literal(true)
    .optional()
    .describe("Present when some bytes are not valid UTF-8; they are shown as U+FFFD."),
  notice: z.string().optional().describe("Says what invalidUtf8 means, when present."),
  splitLine: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe("Present when one line alone exceeded this page's allowance and was cut; next continues it at a col=."),
  splitNotice: z.string().optional().describe("Says where the split line continues, when splitLine is present."),
  next: nextUrl
    .optional()
    .describe("Present exactly when rangeComplete is false: the exact URL of the next page of this file."),
});

export const readDirectoryEntry = z.strictObject({
  path: z.string().describe("The directory in /project/... form."),
  kind: z.literal("dir"),
  totalEntries: z.number().int().min(0).describe("Entries in the whole directory."),
  startEntry: z.number().int().min(1).describe("1-based number of the first entry listed (offset=)."),
  endEntry: lineNumber.describe("Number of the last entry listed; startEntry - 1 when none is."),
  entries: z.array(directoryEntry).describe("Entries in name order; symlinks are reported, never followed."),
  complete: z.boolean().describe("true: every entry of the directory is listed; false: only part of it is."),
  rangeComplete: z.boolean().describe("true: every requested entry is listed; false: follow next for the rest."),
  truncated: z
    .literal(true)
    .optional()
    .describe("Present exactly when the listing stopped short of the requested range."),
  next: nextUrl
    .optional()
    .describe("Present exactly when rangeComplete is false: the exact URL of the next page of this listing."),
});

export const readBinaryEntry = z.strictObject({
  path: z.string().describe("The file in /project/... form."),
  kind: z.literal("binary"),
  size: z.number().int().min(0).describe("File size in bytes."),
  fingerprint,
  mimeType: z
    .string()
    .optional()
    .describe(
      "Present when the file starts with a PNG, JPEG, GIF or WebP signature: image/png, image/jpeg, image/gif or image/webp.",
    ),
  data: z
    .string()
    .optional()
    .describe("With image=1, an image's bytes (up to 3 MiB) as base64: the very bytes fingerprint was taken of."),
  complete: z.literal(true),
  rangeComplete: z.literal(true),
  notice: z.string().describe("Says why the content is not shown as text, and for an image how to get its bytes."),
});

export const readEntry = z.discriminatedUnion("kind", [readFileEntry, readDirectoryEntry, readBinaryEntry]);

/** A path of a multi-path read that could not be read; the other paths were still read. */
export const readFailure = z.strictObject({
  path: z.string().describe("The path as requested, in /project/... form when it resolved."),
  errorCode: z.string().describe("Stable error code, e.g. path_not_found, not_a_file, file_too_large, symlink_escape."),
  retryable: z.boolean().describe("Whether the same request may succeed later unchanged."),
  errorDetail: z.unknown().optional().describe("Structured detail of the failure (path, size, limit...)."),
  repairHint: z.string().optional().describe("What to do next, in one sentence."),
  agentAction: z
    .string()
    .optional()
    .describe("Next step as a code: correct_request, fetch_repair, wait_and_retry, ..."),
  repair: z.string().optional().describe("Exact URL that corrects the request; fetch it as given."),
  find: z
    .string()
    .optional()
    .describe("For path_not_found: exact /f URL that looks for the missing name across the project."),
});

export const readOutput = z.strictObject({
  ok: z.literal(true),
  requestedPaths: z
    .array(z.string())
    .describe("Every path= in request order (repeats kept), shown in /project/... form when it resolved."),
  returnedPaths: z.array(z.string()).describe("Paths with an entry in files, each once."),
  allComplete: z
    .boolean()
    .describe("true when every requested range was returned to its end: nothing to follow, nothing failed."),
  completePaths: z.array(z.string()).describe("Paths whose requested range (or ranges) was returned to its end."),
  incompletePaths: z.array(z.string()).describe("Paths that stopped short; each entry's next URL continues it."),
  unreturnedPaths: z.array(z.string()).describe("Paths that could not be read; failures says why."),
  truncated: z.literal(true).optional().describe("Present exactly when some page stopped short; next continues."),
  next: nextUrl
    .optional()
    .describe(
      "Present exactly when some page stopped short: one path's next, or with several one URL (lines= per path) that continues all of them.",
    ),
  notice: z
    .string()
    .optional()
    .describe("Present when several paths stopped short: next continues them all in one call."),
  files: z
    .array(readEntry)
    .describe("One entry per returned path: a file page, a directory listing page, or a binary file's description."),
  failures: z
    .array(readFailure)
    .optional()
    .describe("Present when some paths of a multi-path read failed (a single-path read answers the failure itself)."),
});

export type ReadFileEntry = z.infer<typeof readFileEntry>;
export type ReadDirectoryEntry = z.infer<typeof readDirectoryEntry>;
export type ReadBinaryEntry = z.infer<typeof readBinaryEntry>;
export type ReadEntry = z.infer<typeof readEntry>;
export type ReadFailure = z.infer<typeof readFailure>;
export type ReadOutput = z.infer<typeof readOutput>;
