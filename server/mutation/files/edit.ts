// edit (/e): one contiguous replacement in one file (or every exact occurrence with all=1, or a new file from
// an empty old). old must match once, exactly or by one tolerant strategy (edit-match.ts); zero or several
// matches are errors saying how many and where. Matching sees any newline as "\n"; the file keeps its
// encoding, BOM and newline style, and every byte outside the replaced spans. The answer carries the diff.
import { z } from "zod";
import { ErrorCode, ToolError } from "../../errors.js";
import { defineTool, type ToolContext } from "../../kernel/tool/definition.js";
import { sessionSlot } from "../../kernel/tool/session-state.js";
import { readHeldFile } from "../../sandbox/fd-ops.js";
import { withHeldPathAsync, type HeldPath } from "../../sandbox/fd-walk.js";
import { intentOf } from "../journal/context.js";
import { journalControls } from "../journal/controls.js";
import { noMatchError } from "./edit-failure.js";
import { guardError, guardFields, guardOf, type EditGuard } from "./edit-guard.js";
import { newlineStyleField, projectPathField, textEncodingField } from "./output-fields.js";
import { requireAgentMay } from "./agent-permission.js";
import { refuseBackslashCreate } from "./backslash-path.js";
import { checkLane, commitSingleFile, confirmSingleFile, existingFileLane, recoverSingleFile } from "./single-file.js";
import { BLOB_ID_PATTERN } from "../staging/staging.js";
import { detectNewlines } from "../../text/index.js";
import { lineAt, normalizeNewlines } from "./text-match.js";
import { MATCH_STRATEGIES, type EditMatch } from "./edit-match.js";
import { MAX_DIFF_CHARS } from "./edit-diff.js";
import { diffFields, MAX_COUNTED_MATCHES } from "./edit-plan.js";
import { runEditPlan } from "./edit-offload.js";

/** The serial-edit nudge: this many distinct successful edits within the window suggest one /a patch. */
export const EDIT_STREAK_THRESHOLD = 3;
export const EDIT_STREAK_WINDOW_MS = 30_000;
/**
 * This session's recent successful edits, for the bulk-patch nudge: call id -> time, oldest first (a Map keeps
 * insertion order), so expired ones are dropped from the front and each edit costs O(1), not a pass over the window.
 */
const editStreak = sessionSlot((): Map<string, number> => new Map());
/** Line numbers an ambiguity error lists. */
const MAX_LISTED_LINES = 20;

/** What a successful /e answers (before the journal's callId and state). */
export const editOutput = z.strictObject({
  ok: z.literal(true),
  path: projectPathField,
  line: z
    .number()
    .int()
    .describe("1-based line where the replaced text began; read around it with /r to check the change."),
  linesRemoved: z
    .number()
    .int()
    .describe("Lines the replaced text spanned (summed over every place with all=1; 0 for a created file)."),
  linesAdded: z.number().int().describe("Lines new spans (summed over every place with all=1)."),
  encoding: textEncodingField.describe("The file's encoding, kept as it was (BOM included)."),
  newline: newlineStyleField.describe(
    "The file's newline style as it was before the edit; new lines took the newline of the span they replaced.",
  ),
  matchedBy: z
    .enum(MATCH_STRATEGIES)
    .optional()
    .describe(
      "How old was found: exact, or the one tolerant strategy that found it in exactly one place (then replaced shows the file's text that was replaced).",
    ),
  replaced: z
    .string()
    .optional()
    .describe("With a tolerant match: the file's text that was actually replaced (clipped to 2 KiB)."),
  occurrences: z.number().int().optional().describe("With all=1: how many places were replaced."),
  created: z
    .literal(true)
    .optional()
    .describe("The file did not exist: old was empty and the file was created with new."),
  diff: z
    .string()
    .optional()
    .describe(
      `Unified diff of the change, computed from the file's content before and after (newlines shown as \\n), at most ${MAX_DIFF_CHARS / 1024} KiB.`,
    ),
  diffTruncated: z
    .literal(true)
    .optional()
    .describe("The diff was clipped (or the change was too large to diff); read the file to see the rest."),
  suggestedBulkPatch: z
    .literal(true)
    .optional()
    .describe(
      `Present once ${EDIT_STREAK_THRESHOLD} edits land within ${EDIT_STREAK_WINDOW_MS / 1000} s in this session: put the remaining known changes into one /a patch.`,
    ),
  efficiencyHint: z
    .string()
    .optional()
    .describe("Present with suggestedBulkPatch: says how many edits and what to do instead."),
});
export type EditOutput = z.infer<typeof editOutput>;

export const editTool = defineTool({
  id: "edit",
  route: "e",
  longRoutes: ["edit_file", "replace"],
  capability: "mutation",
  permission: "write",
  description:
    "Replace the one place old occurs in a file with new (new as raw=; or oldBlob/newBlob); all=1 replaces every occurrence; an empty old creates a missing file.",
  example: "/e?path=src/app.ts&old=hello&raw=hello world",
  schema: z.object({
    path: z.string(),
    old: z.string().optional(),
    new: z.string().optional(),
    oldBlob: z.string().regex(BLOB_ID_PATTERN).optional(),
    newBlob: z.string().regex(BLOB_ID_PATTERN).optional(),
    oldCount: z.number().int().optional(),
    newCount: z.number().int().optional(),
    /** Replace every exact occurrence of old (OpenCode's replaceAll). */
    all: z.boolean().optional(),
    ...guardFields,
    ...journalControls,
  }),
  output: editOutput,
  url: {
    aliases: { file: "path", filePath: "path", replaceAll: "all", oldString: "old", newString: "new" },
    rawField: "new",
  },
  journal: {
    stagedContent: [
      { blob: "oldBlob", count: "oldCount", into: "old" },
      { blob: "newBlob", count: "newCount", into: "new" },
    ],
    recover: recoverSingleFile,
    confirm: confirmSingleFile,
    awaitsDurableItself: true,
    // An empty old creates the file (and its folders): that runs alone in the project.
    lane: (args, ctx) =>
      typeof args.old === "string" && args.old.length > 0 ? existingFileLane(args, ctx) : undefined,
  },
  async execute(args, ctx) {
    const old = normalizeNewlines(args.old ?? "");
    const replacement = normalizeNewlines(args.new ?? "");
    if (old.length === 0) {
      return withHeldPathAsync(ctx.project.root, args.path, { creating: true }, (target) => {
        refuseBackslashCreate(ctx, args.path, target);
        return createHeld(ctx, target, args.new ?? "");
      });
    }
    if (old === replacement) {
      throw new ToolError(ErrorCode.editNoChange, "old and new are the same text; nothing to change.", {
        retryable: false,
      });
    }
    const guard = guardOf(args);
    return withHeldPathAsync(ctx.project.root, args.path, { allowMissing: false }, (target) =>
      editHeld(ctx, target, old, replacement, args.all === true, guard),
    );
  },
});

/**
 * An empty old (OpenCode's create): a missing file is created with new; an existing empty file gets new as its
 * content (nothing in it was unseen). A file with content needs old, or /w after a full read.
 */
async function createHeld(ctx: ToolContext, target: HeldPath, content: string): Promise<EditOutput> {
  const info = target.stats;
  if (target.exists && (!info!.isFile() || info!.size > 0)) {
    throw new ToolError(
      ErrorCode.invalidParameter,
      `old is empty, which creates a file, but ${target.display} already exists${info!.isFile() ? ` with ${info!.size} bytes` : " and is not a file"}. Give the exact text to replace as old (copied from /r), or replace the whole file with /w after reading all of it.`,
      { detail: { parameter: "old", path: target.display }, retryable: false },
    );
  }
  requireAgentMay(ctx, target, "write");
  const bytes = Buffer.from(content, "utf8");
  const after = normalizeNewlines(content);
  const answer: EditOutput = {
    ok: true,
    path: target.display,
    line: 1,
    linesRemoved: 0,
    linesAdded: after.length === 0 ? 0 : after.split("\n").length - (after.endsWith("\n") ? 1 : 0),
    encoding: "utf-8",
    newline: detectNewlines(content).style,
    ...(target.exists ? {} : { created: true as const }),
    ...diffFields(target.display, "", after, [{ before: [0, 0], after: [0, Number.MAX_SAFE_INTEGER] }]),
  };
  await commitSingleFile(
    ctx,
    {
      target,
      bytes,
      ...(target.exists ? { mode: info!.mode & 0o7777 } : {}),
      previous: target.exists ? Buffer.alloc(0) : undefined,
    },
    answer,
  );
  return answer;
}

async function editHeld(
  ctx: ToolContext,
  target: HeldPath,
  old: string,
  replacement: string,
  all: boolean,
  guard: EditGuard | undefined,
): Promise<EditOutput> {
  checkLane(ctx, target);
  const info = target.stats!;
  if (!info.isFile())
    throw new ToolError(ErrorCode.notAFile, `${target.display} is not a file.`, {
      detail: { path: target.display },
      retryable: false,
    });
  requireAgentMay(ctx, target, "write");
  const read = await readHeldFile(target.fd!, info.size);
  const display = target.display;
  // The bytes as read come back with the plan (a large file's go to the edit worker and back).
  const job = { previous: read, display, old, replacement, all, ...(guard ? { guard } : {}) };
  const { plan, previous } = await runEditPlan(job, ctx.signal);
  if (plan.kind === "refused") throw guardError(ctx, display, old, guard!, plan.refusal);
  if (plan.kind === "unmatched") throw await matchError(ctx, display, plan.text, old, replacement, plan.match);
  const { bytes } = plan;
  // The whole answer is known before the file changes: it is recorded with the checkpoint, ahead of the rename,
  // so a replay answers the change that happened.
  const answer: EditOutput = { ...plan.answer, ...streakAdvice(ctx) };
  try {
    const hashes = plan.hashes ? { hashes: plan.hashes } : {};
    await commitSingleFile(ctx, { target, bytes, mode: info.mode & 0o7777, previous, ...hashes }, answer);
  } catch (error) {
    // The file did not change: this edit is no part of the session's streak.
    editStreak.of(ctx.state).delete(intentOf(ctx).callId);
    throw error;
  }
  return answer;
}

async function matchError(
  ctx: ToolContext,
  display: string,
  text: string,
  old: string,
  replacement: string,
  match: EditMatch | undefined,
): Promise<ToolError> {
  const read = ctx.urls.to("r", "r", [["path", display]]);
  if (!match) return noMatchError(ctx, display, text, old, replacement, read);
  const hits = match.spans.map((s) => s.start);
  const counted = hits.length > MAX_COUNTED_MATCHES ? `more than ${MAX_COUNTED_MATCHES}` : String(hits.length);
  const lines = hits.slice(0, MAX_LISTED_LINES).map((h) => lineAt(text, h));
  const how = match.strategy === "exact" ? "" : ` when compared ${match.strategy} (it does not occur exactly)`;
  const every = match.strategy === "exact" ? ", add all=1 to replace every occurrence," : "";
  return new ToolError(
    ErrorCode.editAmbiguous,
    `old occurs ${counted} times in ${display}${how} (lines ${lines.join(", ")}${hits.length > MAX_LISTED_LINES ? ", ..." : ""}). Include surrounding lines so it matches once${every} or change several places in one /a patch.`,
    {
      detail: {
        path: display,
        occurrences: hits.length > MAX_COUNTED_MATCHES ? `>${MAX_COUNTED_MATCHES}` : hits.length,
        lines,
        matchedBy: match.strategy,
      },
      retryable: false,
      extra: { read },
    },
  );
}

/**
 * Tracks distinct successful edits in this session; from the third within the window, suggests a bulk patch. Called
 * before the rename (the answer is recorded ahead of it); an edit that then fails is taken out again.
 */
function streakAdvice(ctx: ToolContext): Pick<EditOutput, "suggestedBulkPatch" | "efficiencyHint"> {
  const recent = editStreak.of(ctx.state);
  const now = Date.now();
  const callId = intentOf(ctx).callId;
  recent.delete(callId);
  // Oldest first; a clock stepped back only keeps an entry until the ones before it expire.
  for (const [id, at] of recent) {
    if (now - at <= EDIT_STREAK_WINDOW_MS) break;
    recent.delete(id);
  }
  recent.set(callId, now);
  if (recent.size < EDIT_STREAK_THRESHOLD) return {};
  return {
    suggestedBulkPatch: true,
    efficiencyHint: `${recent.size} edits in ${EDIT_STREAK_WINDOW_MS / 1000} s: put the remaining known changes into one /a patch (*** Begin Patch) instead of one /e per place. The edits so far are applied.`,
  };
}
