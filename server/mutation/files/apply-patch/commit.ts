// Commits a planned patch crash-atomically: every preimage is recorded in the journal in one transaction
// before the first write; a failure mid-commit restores them at once, a crash is rolled back at start-up.
// The writes themselves run in three phases (phases.ts): every new file staged in a durable temp file, then
// the renames and unlinks in plan order, then one fsync per changed directory: N + K fsyncs, not 2N in a row.
import { setTimeout as sleep } from "node:timers/promises";
import { ErrorCode, isToolError, ToolError } from "../../../errors.js";
import { readCoverage } from "../../../kernel/read/read-coverage.js";
import type { ToolContext } from "../../../kernel/tool/definition.js";
import { intentOf, runtimeOf } from "../../journal/context.js";
import { loopIsSaturated } from "../../journal/inline-sync.js";
import { pathsNotRestored, rollbackPreimages, type RollbackReport } from "../../journal/preimages.js";
import { toDisplayPath } from "../../../sandbox/paths.js";
import { PatchCommit, STAGE_CHUNK, type CommitProgress } from "./phases.js";

/** Paths a failed rollback lists in errorDetail.notRestored. */
const MAX_LISTED_NOT_RESTORED = 20;
import type { PatchPlan } from "./plan.js";
import type { NewFileChange } from "../../../store/changes.js";

/** What the patch adds to the project in bytes: new contents less the files they replace or delete. */
function growthOf(plan: PatchPlan): number {
  const after = plan.changes.reduce(
    (sum, change) => sum + (change.op === "deleted" ? 0 : (change.bytes?.length ?? 0)),
    0,
  );
  const before = plan.preimages.reduce((sum, preimage) => sum + (preimage.content?.length ?? 0), 0);
  return after - before;
}

export async function commitPatch(ctx: ToolContext, plan: PatchPlan): Promise<void> {
  const { hooks, terminal } = runtimeOf(ctx);
  // The session's project growth budget (growth-budget.ts): refused before any preimage is recorded.
  const growth = growthOf(plan);
  terminal.growth.admitWrite(ctx.session.id, growth);
  // Large contents staged ahead, a sealed chunk a turn, so the record's transaction stores no megabytes on the loop.
  const { store } = runtimeOf(ctx);
  const changes = await store.changes.stageAhead(reviewChanges(plan));
  try {
    intentOf(ctx).recordPreimages(plan.preimages);
    intentOf(ctx).recordChanges(changes);
  } catch (error) {
    store.changes.discardStaged(changes);
    throw error;
  }
  // Every preimage is on stable storage before the first file (or temp file) appears (a refusal here: nothing was
  // written). With a saturated loop, at once and inline, as single-file.ts does; the phases' fsyncs too.
  const inline = loopIsSaturated(runtimeOf(ctx).journal.inFlight);
  if (inline) intentOf(ctx).durableNow();
  else await intentOf(ctx).durable();
  const coverage = readCoverage.of(ctx.state);
  const progress: CommitProgress = { phase: "stage", at: 0 };
  const commit = new PatchCommit(ctx, plan.changes, progress, inline);
  try {
    await commit.stage();
    // Test-only (URLBRIDGE_TEST_PATCH_SWITCH_DELAY_MS): every temp file durable, the tree not yet changed.
    if (hooks.patchSwitchDelayMs > 0) await sleep(hooks.patchSwitchDelayMs);
    for (const [index, change] of plan.changes.entries()) {
      commit.switchOne(index);
      coverage.invalidate(change.target.absolute);
      if (change.from) coverage.invalidate(change.from.absolute);
      // Test-only (URLBRIDGE_TEST_PATCH_WRITE_DELAY_MS): holds the commit open so a crash test can kill us mid-way.
      if (hooks.patchWriteDelayMs > 0) await sleep(hooks.patchWriteDelayMs);
      // Each switch is a walk and a rename on the event loop (~0.1 ms): a large patch lets other calls in between
      // every STAGE_CHUNK files, except on a saturated loop, where a turn given away costs this one a long wait.
      else if (!inline && (index + 1) % STAGE_CHUNK === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    await commit.sync();
    commit.close();
    terminal.growth.recordWrite(ctx.session.id, growth);
  } catch (error) {
    // Every change before the one that failed went through the phase it failed in; a directory's fsync failing
    // names the first change in that directory, all of them having been applied.
    const failed = plan.changes[progress.at];
    const done = progress.phase === "sync" ? plan.changes.length : progress.at;
    commit.discard();
    commit.close();
    const cause = (error as NodeJS.ErrnoException).code ?? "error";
    let report: RollbackReport | undefined;
    try {
      report = await rollbackPreimages(ctx.project.root, plan.preimages, ctx.project.agentFallback);
    } catch (rollbackError) {
      runtimeOf(ctx).log.error("apply_patch could not roll back after a failed commit", {
        error: String(rollbackError),
      });
    }
    // rolledBack reports what is on disk, not whether the rollback ran without a hitch.
    const notRestored = await pathsNotRestored(ctx.project.root, plan.preimages).catch(() =>
      plan.preimages.map((p) => p.path),
    );
    if (notRestored.length > 0) {
      const shown = notRestored.slice(0, MAX_LISTED_NOT_RESTORED).map((p) => toDisplayPath(ctx.project.root, p));
      throw new ToolError(
        ErrorCode.patchCommitFailed,
        `Writing ${failed?.target.display ?? "a file"} failed (${cause}) and ${notRestored.length} path(s) could not be restored (notRestored); the tree is partly patched. Check those with /r before anything else.`,
        {
          detail: {
            failedAt: failed?.target.display,
            appliedBeforeFailure: done,
            rolledBack: false,
            notRestored: shown,
            changed: plan.changes.slice(0, done + 1).map((c) => c.target.display),
          },
          retryable: false,
          agentAction: "stop",
        },
      );
    }
    report ??= { restored: [], removed: [] };
    const detail = {
      failedAt: failed?.target.display,
      appliedBeforeFailure: done,
      rolledBack: true,
      restored: report.restored.length,
      removed: report.removed.length,
    };
    if (isToolError(error) && error.code === ErrorCode.pathNotFound) {
      // A file (or a folder on its way) the plan read was removed by something else mid-commit. The commit does not
      // write it anew; the rollback puts back every preimage, so the tree is exactly as before the patch.
      const missing = (error.detail as { path?: string } | undefined)?.path ?? failed?.target.display ?? "A path";
      throw new ToolError(
        error.code,
        `${missing} was removed while the patch was being written, so the patch stopped there; every file of the patch, that one included, was restored to its state before it. Read the tree again (/r, /f) to see what else changes it, then send the patch again.`,
        {
          detail: { ...detail, missing },
          retryable: false,
          agentAction: "reread_then_retry",
        },
      );
    }
    if ((isToolError(error) && error.code === ErrorCode.invalidPath) || cause === "ENAMETOOLONG") {
      // A path of the patch cannot exist (a name longer than the file system allows, below a folder the patch
      // creates, so the preflight walk never reached it): the same patch can never succeed, so no retry.
      const why = isToolError(error) ? error.message : "a name in it is longer than the file system allows.";
      throw new ToolError(
        ErrorCode.invalidPath,
        `${failed?.target.display ?? "A path"} cannot be created: ${why} The patch stopped there and every file of it was restored to its state before it. Fix that path in the patch and send it again.`,
        {
          detail: { ...detail, cause },
          retryable: false,
          agentAction: "correct_request",
        },
      );
    }
    if (isToolError(error) && error.code === ErrorCode.permissionDenied) {
      // Permissions changed since planning checked them (a chmod mid-call): the same refusal, the tree as before.
      throw new ToolError(
        error.code,
        error.message.replace("Nothing was written.", "Every file of the patch was restored to its state before it."),
        {
          detail: { ...detail, cause: error.detail },
          retryable: false,
          agentAction: error.agentAction,
          extra: error.extra,
        },
      );
    }
    if (isToolError(error) && error.code === ErrorCode.pathChanged) {
      // A folder on the way was replaced mid-commit: the agent sees path_changed (retryable), as every tool answers it.
      throw new ToolError(
        error.code,
        `${failed?.target.display ?? "A path"} changed while the patch was being written (a folder or link on the way was replaced); every file of the patch was restored to its state before it and nothing outside the project was touched. Fetch retry.`,
        {
          detail,
          retryable: true,
          agentAction: "wait_and_retry",
          extra: retryExtra(ctx),
        },
      );
    }
    throw new ToolError(
      ErrorCode.patchCommitFailed,
      `Writing ${failed?.target.display ?? "a file"} failed (${cause}); every file of the patch was restored to its state before it. Fix the cause, then fetch retry.`,
      {
        detail: {
          failedAt: failed?.target.display,
          appliedBeforeFailure: done,
          rolledBack: true,
          restored: report.restored.length,
          removed: report.removed.length,
        },
        retryable: true,
        agentAction: "correct_request",
        extra: retryExtra(ctx),
      },
    );
  }
}

function retryExtra(ctx: ToolContext): Record<string, unknown> {
  const retry = intentOf(ctx).retryUrl();
  return retry ? { retry } : {};
}

/** Each path the patch changes, before (from its preimage) and after, for review and revert (server/review/). */
function reviewChanges(plan: PatchPlan): NewFileChange[] {
  const before = new Map(plan.preimages.filter((p) => p.kind === "file").map((p) => [p.path, p]));
  const sideOf = (path: string) => {
    const p = before.get(path);
    return p ? { before: { mode: p.mode ?? 0o644, content: p.content ?? Buffer.alloc(0) } } : {};
  };
  const changes: NewFileChange[] = [];
  for (const c of plan.changes) {
    const after = c.bytes ? { after: { ...(c.mode === undefined ? {} : { mode: c.mode }), content: c.bytes } } : {};
    if (c.from) {
      changes.push({ path: c.from.absolute, moved: c.target.absolute, ...sideOf(c.from.absolute) });
      changes.push({ path: c.target.absolute, moved: c.from.absolute, ...after });
    } else changes.push({ path: c.target.absolute, ...sideOf(c.target.absolute), ...after });
  }
  return changes;
}
