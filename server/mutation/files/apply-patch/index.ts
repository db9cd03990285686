// apply_patch (/a): many hunks in many files in one GET. Every operation is parsed and every hunk located
// before the first write; any failure leaves the tree untouched. The commit is crash-atomic (see commit.ts).
import { z } from "zod";
import { ErrorCode, ToolError, type ToolFailure } from "../../../errors.js";
import { defineTool, type InterruptedIntent } from "../../../kernel/tool/definition.js";
import { openFileLimit } from "../../../sandbox/open-file-limit.js";
import { toDisplayPath } from "../../../sandbox/paths.js";
import { journalControls } from "../../journal/controls.js";
import { interruptedFailure } from "../../journal/recovery.js";
import { BLOB_ID_PATTERN } from "../../staging/staging.js";
import { checkDirectoryBudget } from "./budget.js";
import { commitPatch } from "./commit.js";
import { parsePatch } from "./parse.js";
import type { MatchKind } from "./locate.js";
import { planPatch, type PlannedChange } from "./plan.js";
import { MAX_PATCH_DIFF_CHARS, patchDiff } from "./patch-diff.js";
import { projectPathField } from "../output-fields.js";

/** Files listed one by one in a response; a larger patch reports the rest as a count. */
const MAX_LISTED_FILES = 100;
/** Paths named in an interrupted_rolled_back record. */
const MAX_LISTED_RESTORED = 20;

const patchedFile = z.strictObject({
  path: projectPathField.describe("The file as it is after the patch (a move's destination)."),
  op: z.enum(["added", "updated", "moved", "deleted"]),
  from: z.string().optional().describe("Moves only: where the file was, as /project/..."),
  added: z.number().int().describe("Lines added to this file."),
  removed: z.number().int().describe("Lines removed from this file."),
});

const tolerantMatch = z.strictObject({
  path: z.string(),
  hunk: z.number().int().describe("1-based index of the hunk among its file's hunks."),
  line: z.number().int().describe("1-based line where the hunk matched."),
  match: z
    .enum(["trailing_whitespace", "whitespace"])
    .describe("What the match ignored: trailing whitespace, or all leading and trailing whitespace."),
});

/** What a successful /a answers (before the journal's callId and state). */
export const applyPatchOutput = z.strictObject({
  ok: z.literal(true),
  summary: z
    .string()
    .describe(
      "One line: files by operation, lines added and removed, and how many hunks matched only ignoring whitespace.",
    ),
  files: z.array(patchedFile).describe(`Every file the patch touched, in patch order (the first ${MAX_LISTED_FILES}).`),
  filesNotListed: z
    .number()
    .int()
    .optional()
    .describe(`Files beyond the first ${MAX_LISTED_FILES} that the patch also touched.`),
  tolerantMatches: z
    .array(tolerantMatch)
    .optional()
    .describe("Hunks that matched only when whitespace was ignored; check them with /r."),
  hint: z.string().optional().describe("Present with tolerantMatches."),
  diff: z
    .string()
    .optional()
    .describe(
      `Unified diff of every added, updated or moved file in patch order (newlines shown as \\n), at most ${MAX_PATCH_DIFF_CHARS / 1024} KiB in all.`,
    ),
  diffTruncated: z.literal(true).optional().describe("The diff was clipped; read the files to see the rest."),
});
export type ApplyPatchOutput = z.infer<typeof applyPatchOutput>;

export const applyPatchTool = defineTool({
  id: "apply_patch",
  route: "a",
  longRoutes: ["patch", "apply-patch"],
  capability: "mutation",
  permission: "write",
  description: "Apply a *** Begin Patch envelope (Add/Update/Move/Delete File, @@ hunks) atomically; as raw= or blob=.",
  example: "/a?raw=*** Begin Patch~n*** Update File: src/app.ts~n@@~n-old~n+new~n*** End Patch",
  schema: z.object({
    patch: z.string().optional(),
    blob: z.string().regex(BLOB_ID_PATTERN).optional(),
    count: z.number().int().optional(),
    ...journalControls,
  }),
  output: applyPatchOutput,
  url: { rawField: "patch" },
  journal: {
    stagedContent: [{ blob: "blob", count: "count", into: "patch" }],
    recover: recoverPatch,
    awaitsDurableItself: true,
  },
  async execute(args, ctx) {
    const ops = parsePatch(args.patch ?? "");
    const plan = await planPatch(ctx, ops);
    checkDirectoryBudget(plan, openFileLimit());
    await commitPatch(ctx, plan);
    return describe(plan.changes);
  },
});

type LocatedAt = PlannedChange["hunks"][number];

function isTolerant(h: LocatedAt): h is LocatedAt & { match: Exclude<MatchKind, "exact"> } {
  return h.match !== "exact";
}

function describe(changes: PlannedChange[]): ApplyPatchOutput {
  const counts = { added: 0, updated: 0, moved: 0, deleted: 0 };
  let plus = 0;
  let minus = 0;
  for (const c of changes) {
    counts[c.op]++;
    plus += c.added;
    minus += c.removed;
  }
  const tolerant = changes.flatMap((c) => c.hunks.filter(isTolerant).map((h) => ({ path: c.target.display, ...h })));
  const parts = (Object.entries(counts) as Array<[string, number]>)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${n} ${k}`);
  return {
    ok: true,
    summary: `${changes.length} file${changes.length === 1 ? "" : "s"}: ${parts.join(", ")}; +${plus} -${minus} lines${tolerant.length > 0 ? `; ${tolerant.length} hunk(s) matched ignoring whitespace` : ""}`,
    files: changes.slice(0, MAX_LISTED_FILES).map((c) => ({
      path: c.target.display,
      op: c.op,
      ...(c.from ? { from: c.from.display } : {}),
      added: c.added,
      removed: c.removed,
    })),
    ...(changes.length > MAX_LISTED_FILES ? { filesNotListed: changes.length - MAX_LISTED_FILES } : {}),
    ...(tolerant.length > 0
      ? {
          tolerantMatches: tolerant,
          hint: "Some hunks matched only when whitespace was ignored; their context lines kept the file's own whitespace. Check them with /r.",
        }
      : {}),
    ...diffFields(changes),
  };
}

/** The patch's diff, from the plan: what the files were and what the commit makes them. */
function diffFields(changes: PlannedChange[]): Pick<ApplyPatchOutput, "diff" | "diffTruncated"> {
  const found = patchDiff(changes.map((c) => ({ display: c.target.display, diff: c.diff })));
  if (!found) return {};
  return { diff: found.diff, ...(found.truncated ? { diffTruncated: true as const } : {}) };
}

/** journal.recover: a patch found mid-commit is rolled back byte-exactly from its recorded preimages. */
async function recoverPatch(intent: InterruptedIntent): Promise<ToolFailure> {
  if (intent.phase === "pending") return interruptedFailure(intent, "pending", { applied: false });
  const report = await intent.rollback();
  const shown = [...report.restored, ...report.removed]
    .slice(0, MAX_LISTED_RESTORED)
    .map((p) => toDisplayPath(intent.projectRoot, p));
  return new ToolError(
    ErrorCode.interruptedRolledBack,
    "The bridge stopped while this patch was being written; every file it touched was restored to its exact state before the patch. Fetch retry to apply it again.",
    {
      detail: { restored: report.restored.length, removed: report.removed.length, paths: shown },
      retryable: true,
      agentAction: "correct_request",
    },
  ).toFailure();
}
