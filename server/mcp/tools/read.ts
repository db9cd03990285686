// The read family over MCP: read (OpenCode's fields: path, offset, limit; numbered lines, paged, continued by a
// read call; images as MCP image content), and the kernel's outline, stat and project under their own names.
import { OUTLINE_EXTENSIONS, type OutlineOutput } from "../../kernel/read/outline.js";
import { z } from "zod";
import { MAX_IMAGE_BYTES, MAX_READ_LINE_LIMIT } from "../../kernel/limits.js";
import { isPromise, type RunOutcome } from "../../kernel/tool/runner.js";
import type { ReadBinaryEntry, ReadDirectoryEntry, ReadEntry, ReadFileEntry } from "../../kernel/read/read-output.js";
import { callText as toolCallText, mcpWorded } from "../wording.js";
import { fitOutline } from "./fit.js";
import { filePathFields, filePathOf } from "./path-field.js";
import { answerOf, failureText, jsonText, type McpAnswer, type McpToolSpec } from "./spec.js";

/**
 * A page of MCP read: at most 250 lines and 7 KiB of the file's text (fewer when the caller's limit says so), so
 * the whole answer, numbered lines escaped as JSON in structuredContent, stays within MCP_ANSWER_BUDGET_BYTES:
 * under the ~12 KB Codex 0.169 keeps of a tool result before it cuts the middle (docs/MCP.md "Budgets").
 * Numbering costs up to ~9 bytes a line in JSON, so the line bound keeps short-line files in budget too.
 */
export const MCP_READ_DEFAULT_LINES = 250;
export const MCP_READ_PAGE_BYTES = 7 * 1024;

// destructiveHint and idempotentHint mean something only when readOnlyHint is false (MCP): left out, as tools/list is paid per conversation.
const READ_ONLY = { readOnlyHint: true, openWorldHint: false } as const;
const pathField = z
  .string()
  .min(1)
  .describe("Path inside the project, relative to its root (src/app.ts) or as /project/src/app.ts.");

const readInput = z.strictObject({
  ...filePathFields(
    "File or directory inside the project: relative to its root (src/app.ts) or as /project/src/app.ts.",
  ),
  offset: z
    .number()
    .int()
    .min(1)
    .max(MAX_READ_LINE_LIMIT)
    .optional()
    .describe("1-based line to start at (default 1); for a directory, the 1-based entry."),
  limit: z
    .number()
    .int()
    .min(1)
    .max(MAX_READ_LINE_LIMIT)
    .optional()
    .describe(`Most lines (or entries) to return (default ${MCP_READ_DEFAULT_LINES}).`),
});

/** The call that continues a page: MCP clients have tools, not URLs. */
const nextCall = z.strictObject({
  tool: z.literal("read"),
  arguments: z.strictObject({
    path: z.string(),
    offset: z.number().int().min(1),
    limit: z.number().int().min(1).optional(),
  }),
});
export type ReadNextCall = z.infer<typeof nextCall>;

/**
 * What MCP read answers as structuredContent: one path's page, its lines numbered as in the text (Codex and Claude
 * Code show their model this JSON, not the text), and `next`, the exact read call that continues where it ends.
 */
const mcpReadOutput = z.discriminatedUnion("kind", [
  z.strictObject({
    ok: z.literal(true),
    kind: z.literal("file"),
    path: z.string(),
    encoding: z.string(),
    newline: z.string(),
    size: z.number().int(),
    fingerprint: z.string(),
    totalLines: z.number().int(),
    startLine: z.number().int(),
    endLine: z.number().int(),
    lines: z.string().describe("The page's lines, each as its number, a tab and its text."),
    complete: z.boolean(),
    next: nextCall.optional(),
    note: z.string().optional(),
  }),
  z.strictObject({
    ok: z.literal(true),
    kind: z.literal("dir"),
    path: z.string(),
    totalEntries: z.number().int(),
    startEntry: z.number().int(),
    endEntry: z.number().int(),
    entries: z.array(z.record(z.string(), z.unknown())),
    complete: z.boolean(),
    next: nextCall.optional(),
  }),
  z.strictObject({
    ok: z.literal(true),
    kind: z.literal("binary"),
    path: z.string(),
    size: z.number().int(),
    fingerprint: z.string(),
    note: z.string(),
  }),
  z.strictObject({
    ok: z.literal(true),
    kind: z.literal("image"),
    path: z.string(),
    size: z.number().int(),
    fingerprint: z.string(),
    mimeType: z.string(),
    note: z.string(),
  }),
]);
type McpReadBody = z.infer<typeof mcpReadOutput>;

const NEWLINE = /\r\n|\n|\r/;
const TRAILING_NEWLINE = /(\r\n|\n|\r)$/;

/** Lines of a page, numbered like `cat -n`, newlines (LF, CRLF or CR) not shown. */
function numbered(entry: ReadFileEntry): string {
  const { content, startLine } = entry;
  // Without a CR the split on LF alone is the same split, without the regular expression (the common case).
  const cr = content.includes("\r");
  const lines = cr ? content.split(NEWLINE) : content.split("\n");
  if (
    lines.length > 0 &&
    lines[lines.length - 1] === "" &&
    (cr ? TRAILING_NEWLINE.test(content) : content.endsWith("\n"))
  )
    lines.pop();
  const width = String(startLine + lines.length).length;
  let text = "";
  for (let i = 0; i < lines.length; i++)
    text += `${i === 0 ? "" : "\n"}${String(startLine + i).padStart(width)}\t${lines[i]}`;
  return text;
}

/** The read call that continues after `endLine` (or entry), keeping the caller's limit when it gave one. */
function nextOf(path: string, offset: number, limit: number | undefined): ReadNextCall {
  return { tool: "read", arguments: { path, offset, ...(limit !== undefined ? { limit } : {}) } };
}

function callText(next: ReadNextCall): string {
  return `call read with ${JSON.stringify(next.arguments)}`;
}

/** A file page as MCP shows it: structured (numbered lines, next call) and as text, saying the same. */
function filePage(entry: ReadFileEntry, path: string, limit: number | undefined): McpAnswer {
  const lines = entry.content.length === 0 ? "" : numbered(entry);
  const notes: string[] = [];
  let next: ReadNextCall | undefined;
  if (entry.invalidUtf8)
    notes.push(
      "Some bytes are not valid UTF-8 and are shown as U+FFFD; edit and write refuse to rewrite such a file lossily.",
    );
  if (entry.splitLine !== undefined) {
    notes.push(
      `Line ${entry.splitLine} is longer than one page and was cut; read cannot page inside a line: see its rest with grep or shell (e.g. cut -c).`,
    );
    if (entry.splitLine < entry.totalLines) next = nextOf(path, entry.splitLine + 1, limit);
  } else if (!entry.rangeComplete || entry.endLine < entry.totalLines) {
    // rangeComplete means the requested range came whole; the file may still go on past a limit.
    next = nextOf(path, entry.endLine + 1, limit);
  }
  if (next)
    notes.push(
      `Lines ${entry.startLine}-${entry.endLine} of ${entry.totalLines} shown. More follows: ${callText(next)}.`,
    );
  const note = notes.length > 0 ? notes.join(" ") : undefined;
  const body: McpReadBody = {
    ok: true,
    kind: "file",
    path: entry.path,
    encoding: entry.encoding,
    newline: entry.newline,
    size: entry.size,
    fingerprint: entry.fingerprint,
    totalLines: entry.totalLines,
    startLine: entry.startLine,
    endLine: entry.endLine,
    lines,
    complete: entry.complete,
    ...(next ? { next } : {}),
    ...(note ? { note } : {}),
  };
  const head = `${entry.path} (${entry.encoding}, ${entry.newline} newlines, ${entry.totalLines} lines, ${entry.size} bytes)`;
  return { body, text: [head, lines || "(no lines in this range)", ...notes].join("\n") };
}

function directoryPage(entry: ReadDirectoryEntry, path: string, limit: number | undefined): McpAnswer {
  const next = entry.rangeComplete ? undefined : nextOf(path, entry.endEntry + 1, limit);
  const body: McpReadBody = {
    ok: true,
    kind: "dir",
    path: entry.path,
    totalEntries: entry.totalEntries,
    startEntry: entry.startEntry,
    endEntry: entry.endEntry,
    entries: entry.entries,
    complete: entry.complete,
    ...(next ? { next } : {}),
  };
  const lines = entry.entries.map(
    (e) =>
      `${e.name}${e.kind === "dir" ? "/" : ""}${e.kind === "symlink" ? " -> (symlink, not followed)" : ""}${e.size !== undefined ? `  ${e.size} bytes` : ""}`,
  );
  const more = next
    ? [`Entries ${entry.startEntry}-${entry.endEntry} of ${entry.totalEntries} shown. More follows: ${callText(next)}.`]
    : [];
  return { body, text: [`${entry.path}/ (directory, ${entry.totalEntries} entries)`, ...lines, ...more].join("\n") };
}

function binaryPage(entry: ReadBinaryEntry, note: string): McpAnswer {
  const body: McpReadBody = {
    ok: true,
    kind: "binary",
    path: entry.path,
    size: entry.size,
    fingerprint: entry.fingerprint,
    note,
  };
  return { body, text: `${entry.path}: ${note}` };
}

const BINARY_NOTE =
  "binary file; content not shown (only PNG, JPEG, GIF and WebP images are returned, as image content).";

/** What read answers for the kernel's outcome (the kernel's read, asked for image data, did all the reading). */
function readAnswer(outcome: RunOutcome, path: string, limit: number | undefined): McpAnswer {
  if ((outcome.body as Record<string, unknown>).ok === false) {
    const failed = mcpWorded(outcome.body as Record<string, unknown>);
    return { body: failed, text: failureText(failed) };
  }
  const body = outcome.body as Record<string, unknown>;
  const entry = (body.files as ReadEntry[])[0];
  if (!entry) return { body, text: "Nothing was returned." };
  if (entry.kind === "binary") return binaryAnswer(entry);
  return entry.kind === "dir" ? directoryPage(entry, path, limit) : filePage(entry, path, limit);
}

/** A binary entry as MCP shows it: an image the kernel returned as data becomes an image content block. */
function binaryAnswer(entry: ReadBinaryEntry): McpAnswer {
  const { mimeType, data } = entry;
  if (mimeType !== undefined && data !== undefined) {
    // Codex shows its model only structuredContent when there is one, so the note says where the picture is.
    const note = `${mimeType} image, ${entry.size} bytes: the picture is this result's image content block (a client that shows only this JSON cannot show it; describe it from a client that shows images, or use shell to inspect it).`;
    const body: McpReadBody = {
      ok: true,
      kind: "image",
      path: entry.path,
      size: entry.size,
      fingerprint: entry.fingerprint,
      mimeType,
      note,
    };
    return {
      body,
      text: `${entry.path}: ${mimeType} image, ${entry.size} bytes.`,
      content: [{ type: "image", data, mimeType }],
    };
  }
  if (mimeType !== undefined && entry.size > MAX_IMAGE_BYTES)
    return binaryPage(
      entry,
      `${mimeType} image of ${entry.size} bytes, over the ${MAX_IMAGE_BYTES}-byte limit for image content; not shown.`,
    );
  return binaryPage(entry, BINARY_NOTE);
}

const read: McpToolSpec = {
  name: "read",
  kernel: "read",
  title: "Read a file or directory",
  description:
    "Read a text file as numbered lines (pages of up to 250 lines and 7 KiB; `next` is the read call that continues), list a directory, or view a PNG/JPEG/GIF/WebP image. Encoding and newline style are reported.",
  input: readInput,
  contentFields: [],
  annotations: READ_ONLY,
  output: () => mcpReadOutput,
  // Synchronous when the kernel's read was: no microtask between the read and its answer. image: an image's
  // bytes come in the same read, as data, so the picture is the version the answer's fingerprint names.
  call(args, call) {
    const { offset, limit } = args as z.infer<typeof readInput>;
    const path = filePathOf(args);
    const outcome = call.run("read", {
      path: [path],
      ...(offset !== undefined ? { offset } : {}),
      limit: limit ?? MCP_READ_DEFAULT_LINES,
      max: MCP_READ_PAGE_BYTES,
      image: true,
    });
    return isPromise(outcome)
      ? outcome.then((settled) => readAnswer(settled, path, limit))
      : readAnswer(outcome, path, limit);
  },
};

const outline: McpToolSpec = {
  name: "outline",
  kernel: "outline",
  title: "Outline a source file",
  description:
    "Imports and declarations (functions, classes, members, types...) of a JS, TS, Python, Go, Rust or Java file, with their line spans.",
  input: z.strictObject({ path: pathField.describe(`A ${OUTLINE_EXTENSIONS.join(", ")} file inside the project.`) }),
  contentFields: [],
  annotations: READ_ONLY,
  async call(args, call) {
    const outcome = await call.run("outline", { path: args.path });
    const body = outcome.body as Record<string, unknown>;
    const smaller = body.ok === true ? fitOutline(body as unknown as OutlineOutput, String(args.path)) : undefined;
    return answerOf(smaller ? { ...outcome, body: smaller as unknown as RunOutcome["body"] } : outcome, jsonText);
  },
};

const stat: McpToolSpec = {
  name: "stat",
  kernel: "stat",
  title: "Stat a path",
  description: "Whether a path exists, and its kind, size, modification time and mode.",
  input: z.strictObject({ path: pathField }),
  contentFields: [],
  annotations: READ_ONLY,
  async call(args, call) {
    return answerOf(await call.run("stat", { path: args.path }), jsonText);
  },
};

const project: McpToolSpec = {
  name: "project",
  kernel: "project",
  title: "Describe the project",
  description:
    "What the project is made of, without running anything: tools on PATH, marker files, package manager and scripts, how to run its tests, its AGENTS.md / CONTRIBUTING.md.",
  input: z.strictObject({}),
  contentFields: [],
  annotations: READ_ONLY,
  async call(_args, call) {
    const outcome = await call.run("project", {});
    const body = outcome.body as Record<string, unknown>;
    if (body.ok !== true) return answerOf(outcome, jsonText);
    // The kernel's words name the terminal route and a /x URL per test command: over MCP, the shell tool.
    const tests = body.testCommands as Array<Record<string, unknown>> | undefined;
    const worded = {
      ...body,
      ...(tests
        ? {
            testCommands: tests.map((t) =>
              t.run !== undefined && typeof t.command === "string"
                ? { ...t, run: toolCallText({ tool: "shell", arguments: { command: t.command } }) }
                : t,
            ),
          }
        : {}),
      notice: "Executables are looked up on the bridge's PATH, which shell commands use; none was run.",
    };
    return answerOf({ ...outcome, body: worded as unknown as RunOutcome["body"] }, jsonText);
  },
};

export const readTools: readonly McpToolSpec[] = [read, outline, stat, project];
