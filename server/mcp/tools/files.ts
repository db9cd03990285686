// The file-changing family over MCP with OpenCode's names and fields: edit (filePath or path, oldString,
// newString, replaceAll), write (filePath or path, content) and patch (patchText, the *** Begin Patch envelope).
// Each entry renames fields to the kernel's edit, write or apply_patch and renders the answer: every semantic
// (matching, replaceAll, creation, the diff, read-before-write) is the kernel's, the same as over URLs.
import { z } from "zod";
import type { ApplyPatchOutput } from "../../mutation/files/apply-patch/index.js";
import type { EditOutput } from "../../mutation/files/edit.js";
import type { WriteOutput } from "../../mutation/files/write.js";
import { filePathFields, filePathOf } from "./path-field.js";
import { answerOf, failureText, type McpAnswer, type McpToolSpec } from "./spec.js";

const PATH_DESCRIPTION = "The file, relative to the project root (src/app.ts) or as /project/src/app.ts.";

const editInput = z.strictObject({
  ...filePathFields(PATH_DESCRIPTION),
  oldString: z
    .string()
    .describe("Text to replace, copied from read without the line numbers; empty: create the file with newString."),
  newString: z.string().describe("The text to put in its place (may be empty to delete). Must differ from oldString."),
  replaceAll: z.boolean().optional().describe("true: replace every exact occurrence (default: it must occur once)."),
  atLine: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe("Guard, from a failed edit's retryArguments: oldString must match at this line."),
  blockHash: z.string().optional().describe("Guard, from retryArguments: the lines there are still those shown."),
});

/** What the model reads for an edit: what changed, how old was found, and the diff. */
function editText(done: EditOutput): string {
  if (done.created) return `Created ${done.path} (${done.linesAdded} lines).${done.diff ? `\n${done.diff}` : ""}`;
  const what =
    done.occurrences !== undefined
      ? `Replaced ${done.occurrences} occurrences in ${done.path} from line ${done.line}`
      : `Edited ${done.path} at line ${done.line}`;
  const how =
    done.matchedBy && done.matchedBy !== "exact"
      ? ` oldString did not occur exactly; matched once ${done.matchedBy}, replacing:\n${done.replaced ?? ""}`
      : "";
  const head = `${what} (${done.linesRemoved} line(s) replaced by ${done.linesAdded}; ${done.encoding}, ${done.newline} newlines kept).${how}`;
  return done.diff ? `${head}\n${done.diff}` : head;
}

const edit: McpToolSpec = {
  name: "edit",
  kernel: "edit",
  title: "Edit a file",
  description:
    "Replace oldString with newString in one file. oldString must occur once (exactly, or else by one tolerant match ignoring indentation or whitespace drift) unless replaceAll is true; zero or several matches are refused with where they are, and nothing changes. An empty oldString creates a new file. Keeps encoding, BOM and newline style; answers a unified diff.",
  input: editInput,
  contentFields: ["oldString", "newString"],
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  async call(args, call): Promise<McpAnswer> {
    const { oldString, newString, replaceAll, atLine, blockHash } = args as z.infer<typeof editInput>;
    const path = filePathOf(args);
    const guard = { ...(atLine === undefined ? {} : { atLine }), ...(blockHash === undefined ? {} : { blockHash }) };
    const outcome = await call.run("edit", {
      path,
      old: oldString,
      new: newString,
      ...(replaceAll ? { all: true } : {}),
      ...guard,
    });
    const answer = answerOf(outcome, (body) =>
      "line" in body ? editText(body as unknown as EditOutput) : `Edited ${String(body.path)}.`,
    );
    // The kernel names all=1, its URL parameter; over MCP the field is replaceAll.
    if (answer.body.errorCode === "edit_ambiguous" && typeof answer.body.repairHint === "string") {
      const body = { ...answer.body, repairHint: answer.body.repairHint.replace("add all=1", "set replaceAll: true") };
      return { body, text: failureText(body) };
    }
    return withGuardedRetry(answer, path, newString);
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
  return {
    body: { ...answer.body, retryArguments },
    text: `${answer.text}\nretryArguments (call edit with exactly these to replace those lines): ${JSON.stringify(retryArguments)}`,
  };
}

const writeInput = z.strictObject({
  ...filePathFields(
    "The file to create (parent folders are created) or replace whole, relative to the project root or as /project/...",
  ),
  content: z.string().describe("The complete new content."),
});

const write: McpToolSpec = {
  name: "write",
  kernel: "write",
  title: "Write a file",
  description:
    "Create a file with content, or replace a whole file you have read in full in its current version. A replaced file keeps its encoding, BOM and newline style; answers a unified diff. To change part of a file prefer edit or patch.",
  input: writeInput,
  contentFields: ["content"],
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  async call(args, call) {
    const { content } = args as z.infer<typeof writeInput>;
    return answerOf(await call.run("write", { path: filePathOf(args), content }), (body) => {
      const done = body as unknown as WriteOutput;
      if (!("created" in done)) return `Wrote ${String((body as { path?: unknown }).path)}.`;
      if (done.unchanged) return `${done.path} already has this content; nothing was written.`;
      const head = `${done.created ? "Created" : "Replaced"} ${done.path} (${done.bytes} bytes, ${done.encoding}, ${done.newline} newlines).`;
      return done.diff ? `${head}\n${done.diff}` : head;
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
    "Apply a *** Begin Patch envelope that adds, updates, moves and deletes files, atomically: every hunk is located before anything is written, and a patch that does not apply changes nothing. Updated files keep their encoding, BOM and newline style; answers a unified diff.",
  input: patchInput,
  contentFields: ["patchText"],
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  async call(args, call) {
    return answerOf(await call.run("apply_patch", { patch: args.patchText }), (body) => {
      const done = body as unknown as ApplyPatchOutput;
      if (!("summary" in done)) return "Patch applied.";
      const lines = [
        done.summary,
        ...done.files.map((f) => `${f.op} ${f.from ? `${f.from} -> ` : ""}${f.path} (+${f.added} -${f.removed})`),
      ];
      if (done.filesNotListed) lines.push(`… and ${done.filesNotListed} more files`);
      if (done.hint) lines.push(done.hint);
      if (done.diff) lines.push(done.diff);
      return lines.join("\n");
    });
  },
};

export const fileTools: readonly McpToolSpec[] = [edit, write, patch];
