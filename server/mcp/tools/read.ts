// The read family over MCP: read (OpenCode's fields: path, offset, limit; numbered lines, paged; images as MCP
// image content), and the kernel's outline, stat and project under their own names.
import { OUTLINE_EXTENSIONS } from "../../kernel/read/outline.js";
import { z } from "zod";
import { MAX_READ_LINE_LIMIT } from "../../kernel/limits.js";
import { isPromise, type MaybePromise, type RunOutcome } from "../../kernel/tool/runner.js";
import type { ReadBinaryEntry, ReadDirectoryEntry, ReadEntry, ReadFileEntry } from "../../kernel/read/read-output.js";
import { readImage } from "./image.js";
import { filePathFields, filePathOf } from "./path-field.js";
import { answerOf, clip, failureText, jsonText, type McpAnswer, type McpCall, type McpToolSpec } from "./spec.js";

/**
 * A page of MCP read, as OpenCode's own read tool pages: at most 2000 lines unless limit says otherwise, and
 * about 50 KiB of text (the kernel's max=, so one call carries what OpenCode would show in one).
 */
export const MCP_READ_DEFAULT_LINES = 2000;
export const MCP_READ_PAGE_BYTES = 50 * 1024;

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;
const pathField = z.string().min(1).describe("File or directory inside the project: relative to its root (src/app.ts) or as /project/src/app.ts.");

const readInput = z.strictObject({
  ...filePathFields("File or directory inside the project: relative to its root (src/app.ts) or as /project/src/app.ts."),
  offset: z.number().int().min(1).max(MAX_READ_LINE_LIMIT).optional().describe("1-based line to start at (default 1); for a directory, the 1-based entry."),
  limit: z.number().int().min(1).max(MAX_READ_LINE_LIMIT).optional().describe(`Most lines (or entries) to return (default ${MCP_READ_DEFAULT_LINES}); a page also stops at about 50 KiB, and the answer says which offset continues.`),
});

const NEWLINE = /\r\n|\n|\r/;
const TRAILING_NEWLINE = /(\r\n|\n|\r)$/;

/** Lines of a page, numbered like `cat -n`, newlines (LF, CRLF or CR) not shown. */
function numbered(entry: ReadFileEntry): string {
  const { content, startLine } = entry;
  // Without a CR the split on LF alone is the same split, without the regular expression (the common case).
  const cr = content.includes("\r");
  const lines = cr ? content.split(NEWLINE) : content.split("\n");
  if (lines.length > 0 && lines[lines.length - 1] === "" && (cr ? TRAILING_NEWLINE.test(content) : content.endsWith("\n"))) lines.pop();
  const width = String(startLine + lines.length).length;
  let text = "";
  for (let i = 0; i < lines.length; i++) text += `${i === 0 ? "" : "\n"}${String(startLine + i).padStart(width)}\t${lines[i]}`;
  return text;
}

function fileText(entry: ReadFileEntry): string {
  const head = `${entry.path} (${entry.encoding}, ${entry.newline} newlines, ${entry.totalLines} lines, ${entry.size} bytes)`;
  const body = entry.content.length === 0 ? "(no lines in this range)" : numbered(entry);
  const notes: string[] = [];
  if (entry.invalidUtf8) notes.push("Some bytes are not valid UTF-8 and are shown as U+FFFD; edit and write refuse to rewrite such a file lossily.");
  if (entry.splitLine !== undefined) {
    notes.push(`Line ${entry.splitLine} is longer than one page and was cut; read cannot page inside a line: see its rest with grep or shell (e.g. cut -c).`);
    if (entry.splitLine < entry.totalLines) notes.push(`More lines follow: call read with offset=${entry.splitLine + 1}.`);
  } else if (!entry.rangeComplete || entry.endLine < entry.totalLines) {
    // rangeComplete means the requested range came whole; the file may still go on past a limit.
    notes.push(`Lines ${entry.startLine}-${entry.endLine} of ${entry.totalLines}: call read with offset=${entry.endLine + 1} for more.`);
  }
  return [head, body, ...notes].join("\n");
}

function directoryText(entry: ReadDirectoryEntry): string {
  const lines = entry.entries.map((e) => `${e.name}${e.kind === "dir" ? "/" : ""}${e.kind === "symlink" ? " -> (symlink, not followed)" : ""}${e.size !== undefined ? `  ${e.size} bytes` : ""}`);
  const more = entry.rangeComplete ? [] : [`Entries ${entry.startEntry}-${entry.endEntry} of ${entry.totalEntries}: call read with offset=${entry.endEntry + 1} for more.`];
  return [`${entry.path}/ (directory, ${entry.totalEntries} entries)`, ...lines, ...more].join("\n");
}

function entryText(entry: ReadEntry): string {
  if (entry.kind === "file") return fileText(entry);
  if (entry.kind === "dir") return directoryText(entry);
  return `${entry.path}: binary file, ${entry.size} bytes; content not shown (only PNG, JPEG, GIF and WebP images are returned, as image content).`;
}

/** What read answers for the kernel's outcome; synchronous unless the file is an image to load. */
function readAnswer(outcome: RunOutcome, path: string, call: McpCall): MaybePromise<McpAnswer> {
  const body = outcome.body as Record<string, unknown>;
  if (body.ok === false) return { body, text: failureText(body) };
  const entry = (body.files as ReadEntry[])[0];
  if (!entry) return { body, text: "Nothing was returned." };
  // An image nearly always holds a NUL (binary to the kernel); one that does not reads as invalid UTF-8.
  if (entry.kind === "binary" || (entry.kind === "file" && entry.invalidUtf8 && entry.startLine === 1)) return imageAnswer(body, entry, path, call);
  return { body, text: clip(entryText(entry)) };
}

async function imageAnswer(body: Record<string, unknown>, entry: ReadFileEntry | ReadBinaryEntry, path: string, call: McpCall): Promise<McpAnswer> {
  const image = await readImage(call.ctx, path, entry.fingerprint, entry.size);
  if (image.kind === "image") {
    return { body, text: `${entry.path}: ${image.mimeType} image, ${entry.size} bytes.`, content: [{ type: "image", data: image.data, mimeType: image.mimeType }] };
  }
  if (image.kind === "too_large") return { body, text: `${entry.path}: ${image.mimeType} image of ${entry.size} bytes, over the ${image.limit}-byte limit for image content; not shown.` };
  return { body, text: clip(entryText(entry)) };
}

const read: McpToolSpec = {
  name: "read",
  kernel: "read",
  title: "Read a file or directory",
  description:
    "Read a text file as numbered lines (offset/limit select lines; a page holds up to 2000 lines and about 50 KiB and says the offset that continues), list a directory, or view a PNG/JPEG/GIF/WebP image. Other binary files are described, never dumped. Encoding (UTF-8, UTF-16, UTF-32, with or without BOM) and newline style are reported.",
  input: readInput,
  contentFields: [],
  annotations: READ_ONLY,
  // Synchronous when the kernel's read was (a text file or directory): no microtask between the read and its answer.
  call(args, call) {
    const { offset, limit } = args as z.infer<typeof readInput>;
    const path = filePathOf(args);
    const outcome = call.run("read", { path: [path], ...(offset !== undefined ? { offset } : {}), limit: limit ?? MCP_READ_DEFAULT_LINES, max: MCP_READ_PAGE_BYTES });
    return isPromise(outcome) ? outcome.then((settled) => readAnswer(settled, path, call)) : readAnswer(outcome, path, call);
  },
};

const outline: McpToolSpec = {
  name: "outline",
  kernel: "outline",
  title: "Outline a source file",
  description: "Imports and declarations (functions, classes and members, interfaces, structs, traits, types, enums, exports) of a JavaScript, TypeScript, Python, Go, Rust or Java file, with their line spans: read the lines you need after.",
  input: z.strictObject({ path: pathField.describe(`A ${OUTLINE_EXTENSIONS.join(", ")} file inside the project.`) }),
  contentFields: [],
  annotations: READ_ONLY,
  async call(args, call) {
    return answerOf(await call.run("outline", { path: args.path }), jsonText);
  },
};

const stat: McpToolSpec = {
  name: "stat",
  kernel: "stat",
  title: "Stat a path",
  description: "Whether a path exists, and its kind (file, dir, other), size, modification time and mode, without reading it.",
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
  description: "What the project is made of, without running anything: executables on the bridge's PATH, marker files at the root (package.json, Cargo.toml...), the package manager and package.json scripts, how to run its tests, and its AGENTS.md / CONTRIBUTING.md guides with their first lines.",
  input: z.strictObject({}),
  contentFields: [],
  annotations: READ_ONLY,
  async call(_args, call) {
    return answerOf(await call.run("project", {}), jsonText);
  },
};

export const readTools: readonly McpToolSpec[] = [read, outline, stat, project];
