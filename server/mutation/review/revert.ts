// revert (/n): undoes this session's own changes (one intent, one file, or every file, from a point on) as a
// journaled intent of its own: runs once per call id, refuses when a file changed after the change it undoes
// (revert_conflict, unless force=1), and commits through the patch's crash-atomic commit: all files or none.
import { z } from "zod";
import { ErrorCode, ToolError, type ToolFailure } from "../../errors.js";
import { defineTool, type InterruptedIntent, type ToolContext } from "../../kernel/tool/definition.js";
import { openFileLimit } from "../../sandbox/open-file-limit.js";
import { walkInsideRoot, type HeldPath } from "../../sandbox/fd-walk.js";
import { toDisplayPath } from "../../sandbox/paths.js";
import type { Preimage } from "../../store/journal.js";
import {
  alreadyRestored,
  checkTargets,
  revertTargets,
  type RevertConflict,
  type RevertScope,
  type RevertTarget,
} from "../../review/revert-plan.js";
import { checkDirectoryBudget } from "../files/apply-patch/budget.js";
import { commitPatch } from "../files/apply-patch/commit.js";
import type { PatchPlan, PlannedChange } from "../files/apply-patch/plan.js";
import { projectPathField } from "../files/output-fields.js";
import { deriveRunNonce } from "../journal/call-id.js";
import { intentOf, runtimeOf } from "../journal/context.js";
import { CALL_ID_PATTERN, journalControls } from "../journal/controls.js";
import { capturePreimages } from "../journal/preimages.js";
import { interruptedFailure } from "../journal/recovery.js";

/** Files and conflicts listed one by one in an answer. */
const MAX_LISTED = 100;

const revertedFile = z.strictObject({
  path: projectPathField,
  op: z
    .enum(["restored", "recreated", "removed"])
    .describe(
      "restored: earlier bytes written back; recreated: a removed file put back; removed: a created file deleted.",
    ),
});

export const revertOutput = z.strictObject({
  ok: z.literal(true),
  summary: z.string().describe("One line: how many files were restored, recreated and removed."),
  files: z.array(revertedFile).describe(`Every file written, in order (the first ${MAX_LISTED}).`),
  alreadyAsBefore: z
    .array(z.string())
    .optional()
    .describe("Files in scope that already held the version to restore: nothing was written to them."),
  forced: z
    .array(z.string())
    .optional()
    .describe("force=1: files whose later change this revert overwrote (they would have been revert_conflict)."),
});
export type RevertOutput = z.infer<typeof revertOutput>;

export const revertTool = defineTool({
  id: "revert",
  route: "n",
  longRoutes: ["undo"],
  capability: "mutation",
  permission: "write",
  description:
    "Undo this session's changes: intent=<callId> (one call; with path=, one file of it), path= (a file, back to before this session changed it), or all=1; since=<callId>: from that call on. Refuses a file changed since unless force=1.",
  example: "/n?intent=auto:edit:0123456789abcdef",
  schema: z.object({
    intent: z.string().regex(CALL_ID_PATTERN).optional(),
    path: z.string().optional(),
    all: z.boolean().optional(),
    since: z.string().regex(CALL_ID_PATTERN).optional(),
    force: z.boolean().optional(),
    ...journalControls,
  }),
  output: revertOutput,
  url: { aliases: { call_id: "intent", file: "path" } },
  journal: { recover: recoverRevert, awaitsDurableItself: true },
  async execute(args, ctx) {
    const scope = scopeOf(ctx, args);
    const { store } = runtimeOf(ctx);
    const targets = revertTargets(store.changes, ctx.session.id, scope);
    if (!targets) throw notFound(scope, ctx);
    const { conflicts, current } = await checkTargets(ctx.session.id, targets);
    if (conflicts.length > 0 && !args.force) throw conflictError(ctx, conflicts);
    const todo = targets.filter((t) => !alreadyRestored(current.get(t.path)!, t));
    const plan = await planOf(ctx, todo);
    if (plan.changes.length > 0) {
      checkDirectoryBudget(plan, openFileLimit());
      await commitPatch(ctx, plan);
    }
    return describe(plan, targets, todo, args.force ? conflicts : []);
  },
});

function scopeOf(
  ctx: ToolContext,
  args: {
    intent?: string | undefined;
    path?: string | undefined;
    all?: boolean | undefined;
    since?: string | undefined;
  },
): RevertScope {
  const named = [args.intent !== undefined, args.path !== undefined && args.intent === undefined, args.all === true];
  if (named.filter(Boolean).length !== 1 || (args.since !== undefined && args.intent !== undefined)) {
    throw new ToolError(
      ErrorCode.conflictingParameters,
      "Name one thing to undo: intent=<callId> (with path= for one of its files), path= (that file, back to before this session changed it), or all=1 (every file); since=<callId> goes with path= or all=1.",
      { retryable: false },
    );
  }
  return {
    ...(args.intent !== undefined ? { callId: args.intent } : {}),
    ...(args.path !== undefined ? { path: canonicalOf(ctx, args.path) } : {}),
    ...(args.since !== undefined ? { since: args.since } : {}),
    ...(args.all ? { all: true } : {}),
  };
}

/** The canonical path a recorded change names (the file may be gone now). */
export function canonicalOf(ctx: ToolContext, input: string): string {
  const target = walkInsideRoot(ctx.project.root, input, { creating: true });
  try {
    return target.absolute;
  } finally {
    target.close();
  }
}

export function notFound(scope: RevertScope, ctx: ToolContext): ToolError {
  const what =
    scope.callId !== undefined
      ? `call ${scope.callId}${scope.path ? ` at ${toDisplayPath(ctx.project.root, scope.path)}` : ""}`
      : scope.path !== undefined
        ? `${toDisplayPath(ctx.project.root, scope.path)}${scope.since ? ` since ${scope.since}` : ""}`
        : scope.since !== undefined
          ? `call ${scope.since}`
          : "this session";
  return new ToolError(
    ErrorCode.changeNotFound,
    `No file change by ${what} is recorded for this session (a change shows once its call succeeded; changes made by /x commands are not recorded). Fetch /c for this session's changes and their call ids.`,
    {
      detail: { ...scope, ...(scope.path ? { path: toDisplayPath(ctx.project.root, scope.path) } : {}) },
      retryable: false,
    },
  );
}

function conflictError(ctx: ToolContext, conflicts: RevertConflict[]): ToolError {
  const force = ctx.urls.repair({
    drop: ["force", "run", "call"],
    add: [
      ["force", "1"],
      ["run", deriveRunNonce(intentOf(ctx).callId, "force")],
    ],
  });
  const first = conflicts[0]!;
  const by = first.laterChange
    ? ` (changed later by ${first.laterChange.session === "this" ? "this session's" : "another session's"} ${first.laterChange.tool} ${first.laterChange.callId})`
    : " (changed outside this session's recorded changes)";
  return new ToolError(
    ErrorCode.revertConflict,
    `${conflicts.length} file(s) changed after the change to undo, e.g. ${first.path}${by}; nothing was written. Read them; to overwrite those later changes anyway, send the same revert with force=1${force ? " (fetch force)" : ""}.`,
    {
      detail: { conflicts: conflicts.slice(0, MAX_LISTED), conflictCount: conflicts.length },
      retryable: false,
      agentAction: "correct_request",
      extra: force ? { force } : {},
    },
  );
}

/** The patch plan that puts every target back, with the preimages of what it replaces. */
async function planOf(ctx: ToolContext, targets: RevertTarget[]): Promise<PatchPlan> {
  const { store } = runtimeOf(ctx);
  const changes: PlannedChange[] = [];
  const preimages = new Map<string, Preimage>();
  for (const t of targets) {
    const bytes = t.restore ? store.changes.blob(t.restore.hash) : undefined;
    if (t.restore && !bytes) throw dropped(t);
    const held: HeldPath = walkInsideRoot(ctx.project.root, t.display, { symlinks: "refuse", creating: true });
    try {
      for (const p of await capturePreimages(held)) if (!preimages.has(p.path)) preimages.set(p.path, p);
      const base = { target: { absolute: held.absolute, display: held.display }, added: 0, removed: 0, hunks: [] };
      if (!t.restore) changes.push({ ...base, op: "deleted" });
      else
        changes.push({
          ...base,
          op: held.exists ? "updated" : "added",
          bytes: bytes!,
          ...(t.restore.mode === null ? {} : { mode: t.restore.mode }),
        });
    } finally {
      held.close();
    }
  }
  return { changes, preimages: [...preimages.values()] };
}

function dropped(t: RevertTarget): ToolError {
  return new ToolError(
    ErrorCode.reviewDetailDropped,
    `The earlier contents of ${t.display} were dropped past the review budget, so it cannot be reverted; nothing was written. Change it by hand.`,
    { detail: { path: t.display, fingerprint: t.restore?.hash.slice(0, 32) }, retryable: false },
  );
}

function describe(
  plan: PatchPlan,
  targets: RevertTarget[],
  todo: RevertTarget[],
  forced: RevertConflict[],
): RevertOutput {
  const ops = plan.changes.map((c) => ({
    path: c.target.display,
    op: c.op === "deleted" ? ("removed" as const) : c.op === "added" ? ("recreated" as const) : ("restored" as const),
  }));
  const count = (op: string) => ops.filter((o) => o.op === op).length;
  const already = targets.filter((t) => !todo.includes(t)).map((t) => t.display);
  return {
    ok: true,
    summary: `${ops.length} file(s) reverted: ${count("restored")} restored, ${count("recreated")} recreated, ${count("removed")} removed${already.length > 0 ? `; ${already.length} already as before` : ""}`,
    files: ops.slice(0, MAX_LISTED),
    ...(already.length > 0 ? { alreadyAsBefore: already.slice(0, MAX_LISTED) } : {}),
    ...(forced.length > 0 ? { forced: forced.map((c) => c.path).slice(0, MAX_LISTED) } : {}),
  };
}

/** journal.recover: a revert found mid-commit is rolled back from its preimages, as a patch is: all or none. */
async function recoverRevert(intent: InterruptedIntent): Promise<ToolFailure> {
  if (intent.phase === "pending") return interruptedFailure(intent, "pending", { applied: false });
  const report = await intent.rollback();
  return new ToolError(
    ErrorCode.interruptedRolledBack,
    "The bridge stopped while this revert was being written; every file it touched was restored to its exact state before it. Fetch retry to revert again.",
    {
      detail: { restored: report.restored.length, removed: report.removed.length },
      retryable: true,
      agentAction: "correct_request",
    },
  ).toFailure();
}
