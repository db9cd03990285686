// The file-changing family over MCP with OpenCode's names and fields: edit (oldString/newString, replaceAll;
// answers a compact diff), write (path, content) and patch (patchText, the *** Begin Patch envelope). Each is a
// journaled intent of the kernel's edit, write or apply_patch, which keep encoding, BOM and newline style.
import { z } from "zod";
import { ErrorCode, ToolError, toFailure } from "../../errors.js";
import type { ReadEntry } from "../../kernel/read/read-output.js";
import type { ApplyPatchOutput } from "../../mutation/files/apply-patch/index.js";
import type { EditOutput } from "../../mutation/files/edit.js";
import { normalizeNewlines } from "../../mutation/files/text-match.js";
import type { WriteOutput } from "../../mutation/files/write.js";
import { wireOutputOf } from "../../mutation/journal/envelope.js";
import { compactDiff } from "./diff.js";
import { answerOf, failureText, type McpAnswer, type McpCall, type McpToolSpec } from "./spec.js";

/** Largest file edit reads whole for its diff and for replaceAll; beyond it edit still works, without a diff. */
export const MAX_EDIT_SOURCE_BYTES = 2 * 1024 * 1024;
/** Bound on read pages (about 24 KiB each) gathered for one edit. */
const MAX_SOURCE_PAGES = 128;
const pathField = z.string().min(1).describe("The file, relative to the project root (src/app.ts) or as /project/src/app.ts.");

interface SourceText {
  /** The file's text as read, its own newlines kept. */
  text: string;
  newline: string;
  encoding: string;
  lossy: boolean;
}

/** The whole current text of a file through the kernel's read (which also records this session's read coverage). */
async function readWhole(call: McpCall, path: string): Promise<SourceText | undefined> {
  let text = "";
  let params: Record<string, unknown> = { path: [path] };
  for (let page = 0; page < MAX_SOURCE_PAGES; page++) {
    const body = (await call.run("read", params)).body as Record<string, unknown>;
    const entry = body.ok === true ? (body.files as ReadEntry[])[0] : undefined;
    if (!entry || entry.kind !== "file" || entry.size > MAX_EDIT_SOURCE_BYTES) return undefined;
    text += entry.content;
    if (entry.complete || !entry.next) {
      return { text, newline: entry.newline, encoding: entry.encoding, lossy: entry.invalidUtf8 === true || (!entry.encoding.startsWith("utf-8") && text.includes("\uFFFD")) };
    }
    const next = new URL(entry.next).searchParams;
    params = { path: [path], offset: Number(next.get("offset") ?? 1), ...(next.get("col") ? { col: Number(next.get("col")) } : {}) };
  }
  return undefined;
}

const editInput = z.strictObject({
  path: pathField,
  oldString: z.string().min(1).describe("Exact text to replace, copied from read (without the line numbers). Newline style does not matter; indentation does."),
  newString: z.string().describe("The text to put in its place (may be empty to delete). Must differ from oldString."),
  replaceAll: z.boolean().optional().describe("true: replace every occurrence. Default false: oldString must occur exactly once, else the edit is refused with the lines where it occurs."),
  atLine: z.number().int().min(1).optional().describe("Guard, from a failed edit's retryArguments: oldString must match at this line."),
  blockHash: z.string().optional().describe("Guard, from retryArguments: the lines there are still those shown."),
});

function editText(display: string, summary: string, diff: string | undefined): string {
  return diff === undefined ? `${summary}\n(diff not shown: the file is over ${MAX_EDIT_SOURCE_BYTES} bytes or could not be read whole)` : `${summary}\n${diff}`;
}

const edit: McpToolSpec = {
  name: "edit",
  kernel: "edit",
  title: "Edit a file",
  description:
    "Replace oldString with newString in one file. oldString must occur exactly once unless replaceAll is true; zero or several matches are refused with where they are, and nothing changes. Keeps the file's encoding, BOM and newline style; answers a compact unified diff.",
  input: editInput,
  contentFields: ["oldString", "newString"],
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  output: (tools) => z.union([wireOutputOf(tools("edit")!), wireOutputOf(tools("write")!)]),
  async call(args, call): Promise<McpAnswer> {
    const { path, oldString, newString, replaceAll, atLine, blockHash } = args as z.infer<typeof editInput>;
    const old = normalizeNewlines(oldString);
    const replacement = normalizeNewlines(newString);
    if (replaceAll && call.keyed) {
      // A keyed retry of a replaceAll answers what the first attempt recorded (the file no longer holds oldString).
      const recorded = (await call.run("result", { call: call.keyed, wait: 0 })).body as Record<string, unknown>;
      const samePath = recorded.path === path || recorded.path === `/project/${path.replace(/^(\.\/|\/project\/)/, "")}`;
      // Only a recorded success on this path: a failure replays through the journal itself (the same write
      // again), and a key that names some other call falls through to the journal's call_id_conflict.
      if (recorded.ok === true && (recorded.tool === "write" || recorded.tool === "edit") && samePath) {
        const { tool: _tool, ...body } = recorded;
        return { body: { ...body, dedupe: "replayed" }, text: `Replaced every occurrence in ${String(body.path)} (recorded result).` };
      }
    }
    const source = await readWhole(call, path);
    const before = source ? normalizeNewlines(source.text) : undefined;
    const occurrences = before === undefined || old.length === 0 ? 0 : before.split(old).length - 1;
    if (!replaceAll || old === replacement || (before !== undefined && occurrences <= 1)) {
      const outcome = await call.run("edit", { path, old: oldString, new: newString, ...(atLine === undefined ? {} : { atLine }), ...(blockHash === undefined ? {} : { blockHash }) });
      const answer = answerOf(outcome, (body) => {
        const done = body as unknown as EditOutput;
        if (!("line" in done)) return `Edited ${String((body as { path?: unknown }).path)}.`;
        const diff = before === undefined ? undefined : compactDiff(done.path, before, before.replace(old, () => replacement));
        return editText(done.path, `Edited ${done.path} at line ${done.line} (${done.linesRemoved} line(s) replaced by ${done.linesAdded}; ${done.encoding}, ${done.newline} newlines kept).`, diff);
      });
      return withGuardedRetry(answer, path, newString);
    }
    const refusal = replaceAllRefusal(path, source);
    if (refusal) return { body: toFailure(refusal) as unknown as Record<string, unknown>, text: failureText(toFailure(refusal) as unknown as Record<string, unknown>) };
    const after = before!.split(old).join(replacement);
    const outcome = await call.run("write", { path, content: after });
    return answerOf(outcome, (body) => {
      const done = body as unknown as WriteOutput;
      return editText(done.path, `Replaced ${occurrences} occurrences in ${done.path} (${done.encoding}, ${done.newline} newlines kept).`, compactDiff(done.path, before!, after));
    });
  },
};

/**
 * A stale edit's guarded next step (the kernel's retryArguments) in this tool's own argument names, so the client
 * can send exactly it: oldString set to the nearest lines, atLine and blockHash guarding them.
 */
function withGuardedRetry(answer: McpAnswer, path: string, newString: string): McpAnswer {
  const kernel = answer.body.retryArguments as { old: string; atLine: number; blockHash: string } | undefined;
  if (!kernel) return answer;
  const retryArguments = { path, oldString: kernel.old, newString, atLine: kernel.atLine, blockHash: kernel.blockHash };
  return { body: { ...answer.body, retryArguments }, text: `${answer.text}\nretryArguments (call edit with exactly these to replace those lines): ${JSON.stringify(retryArguments)}` };
}

/** replaceAll rewrites the file whole through write, which keeps one newline style: refuse what it cannot keep exactly. */
function replaceAllRefusal(path: string, source: SourceText | undefined): ToolError | undefined {
  if (!source) {
    return new ToolError(ErrorCode.fileTooLarge, `replaceAll reads the file whole, and ${path} is over ${MAX_EDIT_SOURCE_BYTES} bytes or not a readable text file. Change each place with edit (include surrounding lines), or use patch.`, {
      detail: { path, limit: MAX_EDIT_SOURCE_BYTES },
      retryable: false,
    });
  }
  if (source.lossy) {
    return new ToolError(ErrorCode.unsupportedEncoding, `${path} holds bytes that do not decode exactly, so replaceAll would rewrite it lossily; nothing was changed. Edit one place at a time with edit, or use shell.`, {
      detail: { path, encoding: source.encoding },
      retryable: false,
    });
  }
  if (source.newline === "mixed") {
    return new ToolError(ErrorCode.invalidParameter, `${path} mixes newline styles, which replaceAll cannot keep byte for byte; nothing was changed. Replace each place with edit, or all of them in one patch.`, {
      detail: { path, parameter: "replaceAll" },
      retryable: false,
    });
  }
  return undefined;
}

const writeInput = z.strictObject({
  path: pathField.describe("The file to create (parent folders are created) or replace whole, relative to the project root or as /project/..."),
  content: z.string().describe("The complete new content. Replacing an existing file requires having read all of its current version first (read), else stale_read."),
});

const write: McpToolSpec = {
  name: "write",
  kernel: "write",
  title: "Write a file",
  description:
    "Create a file with content, or replace a whole file you have read in full in its current version. A replaced file keeps its encoding, BOM and newline style; to change part of a file prefer edit or patch.",
  input: writeInput,
  contentFields: ["content"],
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  async call(args, call) {
    const { path, content } = args as z.infer<typeof writeInput>;
    return answerOf(await call.run("write", { path, content }), (body) => {
      const done = body as unknown as WriteOutput;
      if (!("created" in done)) return `Wrote ${String((body as { path?: unknown }).path)}.`;
      if (done.unchanged) return `${done.path} already has this content; nothing was written.`;
      return `${done.created ? "Created" : "Replaced"} ${done.path} (${done.bytes} bytes, ${done.encoding}, ${done.newline} newlines).`;
    });
  },
};

const patchInput = z.strictObject({
  patchText: z
    .string()
    .min(1)
    .describe(
      "The whole patch: '*** Begin Patch', then '*** Add File: <path>' (+lines), '*** Update File: <path>' (optional '*** Move to: <path>', then @@ hunks of ' ' context, '-' removed, '+' added lines) or '*** Delete File: <path>', and '*** End Patch'.",
    ),
});

const patch: McpToolSpec = {
  name: "patch",
  kernel: "apply_patch",
  title: "Apply a patch",
  description:
    "Apply a *** Begin Patch envelope that adds, updates, moves and deletes files, atomically: every hunk is located before anything is written, and a patch that does not apply changes nothing. Updated files keep their encoding, BOM and newline style.",
  input: patchInput,
  contentFields: ["patchText"],
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  async call(args, call) {
    return answerOf(await call.run("apply_patch", { patch: args.patchText }), (body) => {
      const done = body as unknown as ApplyPatchOutput;
      if (!("summary" in done)) return "Patch applied.";
      const lines = [done.summary, ...done.files.map((f) => `${f.op} ${f.from ? `${f.from} -> ` : ""}${f.path} (+${f.added} -${f.removed})`)];
      if (done.filesNotListed) lines.push(`… and ${done.filesNotListed} more files`);
      if (done.hint) lines.push(done.hint);
      return lines.join("\n");
    });
  },
};

export const fileTools: readonly McpToolSpec[] = [edit, write, patch];
