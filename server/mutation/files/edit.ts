// edit (/e): exactly one contiguous replacement in one file. old must match once; zero or several matches
// are errors saying how many and where. Matching sees any newline as "\n"; the file keeps its encoding,
// BOM and newline style, and every byte outside the replaced span.
import { z } from "zod";
import { ErrorCode, ToolError } from "../../errors.js";
import { defineTool, type ToolContext } from "../../kernel/tool/definition.js";
import { sessionSlot } from "../../kernel/tool/session-state.js";
import { readHeldFile } from "../../sandbox/fd-ops.js";
import { withHeldPathAsync, type HeldPath } from "../../sandbox/fd-walk.js";
import { intentOf } from "../journal/context.js";
import { journalControls } from "../journal/controls.js";
import { noMatchError } from "./edit-failure.js";
import { checkGuard, guardFields, guardOf, type EditGuard } from "./edit-guard.js";
import { newlineStyleField, projectPathField, textEncodingField } from "./output-fields.js";
import { commitSingleFile, confirmSingleFile, recoverSingleFile } from "./single-file.js";
import { BLOB_ID_PATTERN } from "../staging/staging.js";
import { convertNewlines, decodeForEdit, encodeText } from "../../text/index.js";
import { findOccurrences, firstNewlineIn, lineAt, normalizeNewlines, normalizeWithOffsets } from "./text-match.js";

/** The serial-edit nudge: this many distinct successful edits within the window suggest one /a patch. */
export const EDIT_STREAK_THRESHOLD = 3;
export const EDIT_STREAK_WINDOW_MS = 30_000;
/**
 * This session's recent successful edits, for the bulk-patch nudge: call id -> time, oldest first (a Map keeps
 * insertion order), so expired ones are dropped from the front and each edit costs O(1), not a pass over the window.
 */
const editStreak = sessionSlot((): Map<string, number> => new Map());
/** Occurrences counted (and line numbers listed) before an ambiguity error stops looking. */
const MAX_COUNTED_MATCHES = 1000;
const MAX_LISTED_LINES = 20;

/** What a successful /e answers (before the journal's callId and state). */
export const editOutput = z.strictObject({
  ok: z.literal(true),
  path: projectPathField,
  line: z.number().int().describe("1-based line where the replaced text began; read around it with /r to check the change."),
  linesRemoved: z.number().int().describe("Lines old spanned."),
  linesAdded: z.number().int().describe("Lines new spans."),
  encoding: textEncodingField.describe("The file's encoding, kept as it was (BOM included)."),
  newline: newlineStyleField.describe("The file's newline style as it was before the edit; new lines took the newline of the span they replaced."),
  suggestedBulkPatch: z.literal(true).optional().describe(`Present once ${EDIT_STREAK_THRESHOLD} edits land within ${EDIT_STREAK_WINDOW_MS / 1000} s in this session: put the remaining known changes into one /a patch.`),
  efficiencyHint: z.string().optional().describe("Present with suggestedBulkPatch: says how many edits and what to do instead."),
});
export type EditOutput = z.infer<typeof editOutput>;

export const editTool = defineTool({
  id: "edit",
  route: "e",
  longRoutes: ["edit_file", "replace"],
  capability: "mutation",
  permission: "write",
  description: "Replace the one place old occurs in a file with new (new as raw=; or oldBlob/newBlob).",
  example: "/e?path=src/app.ts&old=hello&raw=hello world",
  schema: z.object({
    path: z.string(),
    old: z.string().optional(),
    new: z.string().optional(),
    oldBlob: z.string().regex(BLOB_ID_PATTERN).optional(),
    newBlob: z.string().regex(BLOB_ID_PATTERN).optional(),
    oldCount: z.number().int().optional(),
    newCount: z.number().int().optional(),
    ...guardFields,
    ...journalControls,
  }),
  output: editOutput,
  url: { aliases: { file: "path" }, rawField: "new" },
  journal: {
    stagedContent: [
      { blob: "oldBlob", count: "oldCount", into: "old" },
      { blob: "newBlob", count: "newCount", into: "new" },
    ],
    recover: recoverSingleFile,
    confirm: confirmSingleFile,
    awaitsDurableItself: true,
  },
  async execute(args, ctx) {
    const old = normalizeNewlines(args.old ?? "");
    const replacement = normalizeNewlines(args.new ?? "");
    if (old.length === 0) {
      throw new ToolError(ErrorCode.invalidParameter, "old is empty; give the exact text to replace (to create a file use /w, to append use /a).", {
        detail: { parameter: "old" },
        retryable: false,
      });
    }
    if (old === replacement) {
      throw new ToolError(ErrorCode.editNoChange, "old and new are the same text; nothing to change.", { retryable: false });
    }
    const guard = guardOf(args);
    return withHeldPathAsync(ctx.project.root, args.path, { allowMissing: false }, (target) => editHeld(ctx, target, old, replacement, guard));
  },
});

async function editHeld(ctx: ToolContext, target: HeldPath, old: string, replacement: string, guard: EditGuard | undefined): Promise<EditOutput> {
  const info = target.stats!;
  if (!info.isFile()) throw new ToolError(ErrorCode.notAFile, `${target.display} is not a file.`, { detail: { path: target.display }, retryable: false });
  const previous = await readHeldFile(target.fd!, info.size);
  const decoded = decodeForEdit(previous, target.display);
  const normalized = normalizeWithOffsets(decoded.text);
  const hits = findOccurrences(normalized.text, old, MAX_COUNTED_MATCHES + 1);
  if (guard) checkGuard(ctx, target.display, normalized.text, old, hits, guard);
  if (hits.length !== 1) throw await matchError(ctx, target.display, normalized.text, old, replacement, hits);

  const at = hits[0]!;
  const start = normalized.offsets[at]!;
  const end = normalized.offsets[at + old.length]!;
  // New lines take the newline the replaced span used (mixed files stay mixed), else the file's own.
  const newline = firstNewlineIn(decoded.text, start, end) ?? decoded.newline;
  const text = decoded.text.slice(0, start) + convertNewlines(replacement, newline) + decoded.text.slice(end);
  // The whole answer is known before the file changes: it is recorded with the checkpoint, ahead of the rename.
  const answer: EditOutput = {
    ok: true,
    path: target.display,
    line: lineAt(normalized.text, at),
    linesRemoved: old.split("\n").length,
    linesAdded: replacement.split("\n").length,
    encoding: decoded.encoding,
    newline: decoded.style,
    ...streakAdvice(ctx),
  };
  try {
    await commitSingleFile(ctx, { target, bytes: encodeText(text, decoded.encoding), mode: info.mode & 0o7777, previous }, answer);
  } catch (error) {
    // The file did not change: this edit is no part of the session's streak.
    editStreak.of(ctx.state).delete(intentOf(ctx).callId);
    throw error;
  }
  return answer;
}

async function matchError(ctx: ToolContext, display: string, text: string, old: string, replacement: string, hits: number[]): Promise<ToolError> {
  const read = ctx.urls.to("r", "r", [["path", display]]);
  if (hits.length === 0) return noMatchError(ctx, display, text, old, replacement, read);
  const counted = hits.length > MAX_COUNTED_MATCHES ? `more than ${MAX_COUNTED_MATCHES}` : String(hits.length);
  const lines = hits.slice(0, MAX_LISTED_LINES).map((h) => lineAt(text, h));
  return new ToolError(
    ErrorCode.editAmbiguous,
    `old occurs ${counted} times in ${display} (lines ${lines.join(", ")}${hits.length > MAX_LISTED_LINES ? ", ..." : ""}). Include surrounding lines so it matches once, or change several places in one /a patch.`,
    { detail: { path: display, occurrences: hits.length > MAX_COUNTED_MATCHES ? `>${MAX_COUNTED_MATCHES}` : hits.length, lines }, retryable: false, extra: { read } },
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
