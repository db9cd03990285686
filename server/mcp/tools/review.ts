// Review and undo over MCP: changes (the session's change set, or an exact diff) and revert (undo its own
// changes), renaming fields to the kernel's /c and /n. Every semantic (conflicts, force, exactly once) is the kernel's.
import { z } from "zod";
import { MAX_DIFF_PAGE_BYTES } from "../../review/page.js";
import { answerOf, jsonText, type McpToolSpec } from "./spec.js";

const changesInput = z.strictObject({
  callId: z.string().optional().describe("That call's diff."),
  path: z.string().optional().describe("That file's diff."),
  offset: z.number().min(0).optional().describe("Next page: the previous answer's end."),
  fingerprint: z.string().optional().describe("Next page: the previous answer's fingerprint."),
});

interface ListedIntent {
  callId: string;
  tool: string;
  files: Array<{ path: string; change: string }>;
}

interface ListedNotice {
  callId: string;
  tool: string;
  notice: string;
}

/** What the model reads: the diff page, or one line per call and file changed. */
function changesText(body: Record<string, unknown>): string {
  if (typeof body.diff === "string") {
    const more =
      body.end !== body.total
        ? `\n… more: call changes again with offset ${String(body.end)} and fingerprint ${String(body.fingerprint)}`
        : "";
    return `${body.diff}${more}`;
  }
  const intents = (body.intents as ListedIntent[] | undefined) ?? [];
  const notices = ((body.notices as ListedNotice[] | undefined) ?? []).map(
    (n) => `${n.callId} (${n.tool}): ${n.notice}`,
  );
  if (intents.length === 0 && notices.length === 0) return "No file changes recorded for this session.";
  return [
    ...intents.map((i) => `${i.callId} (${i.tool}): ${i.files.map((f) => `${f.change} ${f.path}`).join(", ")}`),
    ...notices,
  ].join("\n");
}

const changes: McpToolSpec = {
  name: "changes",
  kernel: "changes",
  title: "Changes",
  description:
    "Files this session changed, by callId; with callId or path: the exact diff, paged (offset, fingerprint).",
  input: changesInput,
  contentFields: [],
  annotations: { readOnlyHint: true, openWorldHint: false },
  output: () => z.looseObject({ ok: z.literal(true) }),
  async call(args, call) {
    const a = args as z.infer<typeof changesInput>;
    const path = a.path;
    const input = {
      ...(a.callId ? { intent: a.callId } : {}),
      ...(path ? { path } : {}),
      ...(a.offset !== undefined ? { offset: a.offset } : {}),
      ...(a.fingerprint ? { fingerprint: a.fingerprint } : {}),
      max: MAX_DIFF_PAGE_BYTES,
    };
    return answerOf(await call.run("changes", input), changesText);
  },
};

const revertInput = z.strictObject({
  callId: z.string().optional().describe("Undo that call (with path: that file of it)."),
  path: z.string().optional().describe("Undo that file."),
  all: z.boolean().optional().describe("Undo every change."),
  force: z.boolean().optional().describe("Overwrite later changes."),
});

const revert: McpToolSpec = {
  name: "revert",
  kernel: "revert",
  title: "Revert",
  description:
    "Undo this session's changes: a call (callId), a file (path) or all; refuses files changed since unless force.",
  input: revertInput,
  contentFields: [],
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  output: () => z.looseObject({ ok: z.literal(true) }),
  async call(args, call) {
    const a = args as z.infer<typeof revertInput>;
    const path = a.path;
    const outcome = await call.run("revert", {
      ...(a.callId ? { intent: a.callId } : {}),
      ...(path ? { path } : {}),
      ...(a.all ? { all: true } : {}),
      ...(a.force ? { force: true } : {}),
    });
    return answerOf(outcome, (body) => (typeof body.summary === "string" ? body.summary : jsonText(body)));
  },
};

export const reviewTools: readonly McpToolSpec[] = [changes, revert];
