// The operator's review and decision for a worktree session (docs/CONTROL_PLANE.md "Worktree sessions"): its branch
// against its base with the diff, then merge (auto, merge, squash), keep or discard, each recorded as the session's
// worktree outcome. One decision at a time per project: two merges into one base never interleave.
import type Router from "@koa/router";
import { z } from "zod";
import type { Identity } from "../../sandbox/identity.js";
import type { Store } from "../../store/index.js";
import type { SessionWorktreeRow } from "../../store/worktrees.js";
import { MAX_DIFF_PAGE_BYTES, MIN_DIFF_PAGE_BYTES } from "../../review/page.js";
import { ControlError, ControlErrorCode, type ControlErrorBody } from "../errors.js";
import { readJsonBody } from "../json-body.js";
import type { Registry } from "../registry.js";
import { parseInput } from "../validate.js";
import type { WorktreeTarget } from "./branch-git.js";
import { mergeBranch, type MergeResult } from "./branch-merge.js";
import { readBranchReview, type BranchReview } from "./branch-review.js";
import { MergeRefusal } from "./merge-refusal.js";
import { removeWorktree } from "./worktree-git.js";
import type { WorktreeView } from "./worktree-view.js";
import type { WorktreeSessions } from "./worktree-sessions.js";

const worktreeQuery = z
  .object({
    diff: z.enum(["0", "1", "true", "false"]).optional(),
    path: z.string().min(1).optional(),
    offset: z.coerce.number().int().min(0).optional(),
    max: z.coerce.number().int().min(MIN_DIFF_PAGE_BYTES).max(MAX_DIFF_PAGE_BYTES).optional(),
    fingerprint: z
      .string()
      .regex(/^[0-9a-f]{32}$/, "the fingerprint a page answered")
      .optional(),
  })
  .strict();

const mergeBody = z.object({ mode: z.enum(["auto", "merge", "squash"]).default("auto") }).strict();

/** GET /api/sessions/:id/worktree: the session's worktree (folder, disk use, outcome) and git's review of its branch. */
export type WorktreeSessionView = WorktreeView & BranchReview & { sessionId: string };

/** POST /api/sessions/:id/worktree/merge. */
export type WorktreeMergeView = MergeResult & { outcome: "merged" };

/** A refused merge's body: the error, and the paths at fault (conflicts, uncommitted files) when there are some. */
export type WorktreeErrorBody = ControlErrorBody & { paths?: string[] };

export interface WorktreeRoutesOptions {
  store: Store;
  registry: Registry;
  worktrees: WorktreeSessions | undefined;
  /** The project owner (who git runs as) when the bridge is root; undefined: the bridge's own user. */
  ownerOf?: ((root: string) => Identity | undefined) | undefined;
}

type Ctx = { status: number; body: unknown };

export function addWorktreeRoutes(router: Router, options: WorktreeRoutesOptions): void {
  const { store, registry } = options;
  const queues = new Map<string, Promise<unknown>>();

  /** Runs `work` after every earlier decision on the same project has settled. */
  const inTurn = <T>(projectId: string, work: () => Promise<T>): Promise<T> => {
    const next = (queues.get(projectId) ?? Promise.resolve()).then(work, work);
    const settled = next.then(
      () => undefined,
      () => undefined,
    );
    queues.set(projectId, settled);
    void settled.then(() => {
      if (queues.get(projectId) === settled) queues.delete(projectId);
    });
    return next;
  };

  const targetOf = (sessionId: string): { row: SessionWorktreeRow; target: WorktreeTarget } => {
    const session = registry.getSession(sessionId);
    const row = store.worktrees.get(sessionId);
    if (!row) {
      throw new ControlError(
        ControlErrorCode.notAWorktreeSession,
        `Session "${session.name}" works in its project folder, not in a worktree of its own: there is no branch to review or merge.`,
      );
    }
    const root = registry.getProject(row.projectId).root;
    const target = {
      repo: root,
      path: row.path,
      branch: row.branch,
      baseRef: row.baseRef,
      identity: options.ownerOf?.(root),
    };
    return { row, target };
  };

  /** Answers `work`'s result; a refusal that names paths answers them beside its error. */
  const answer = async (ctx: Ctx, work: () => Promise<unknown>) => {
    try {
      ctx.body = await work();
    } catch (error) {
      if (!(error instanceof MergeRefusal)) throw error;
      ctx.status = error.status;
      const body: WorktreeErrorBody = { error: { code: error.code, message: error.message }, paths: error.paths };
      ctx.body = body;
    }
  };

  router.get("/sessions/:id/worktree", async (ctx) => {
    const q = parseInput(worktreeQuery, ctx.query);
    const { target } = targetOf(ctx.params.id!);
    const wantsDiff = q.diff === "1" || q.diff === "true" || q.path !== undefined || q.offset !== undefined;
    const diff = wantsDiff
      ? { path: q.path, offset: q.offset, max: q.max ?? MAX_DIFF_PAGE_BYTES, fingerprint: q.fingerprint }
      : undefined;
    const [view, review] = await Promise.all([
      options.worktrees?.measuredView(ctx.params.id!),
      readBranchReview(target, diff),
    ]);
    if (!view) throw new ControlError(ControlErrorCode.notAWorktreeSession, "This bridge has no worktree sessions.");
    const body: WorktreeSessionView = { sessionId: ctx.params.id!, ...view, ...review };
    ctx.body = body;
  });

  router.post("/sessions/:id/worktree/merge", async (ctx) => {
    const { mode } = parseInput(mergeBody, await readJsonBody(ctx));
    const id = ctx.params.id!;
    const { row, target } = targetOf(id);
    const name = registry.getSession(id).name;
    return answer(ctx, () =>
      inTurn(row.projectId, async (): Promise<WorktreeMergeView> => {
        // A retry after the bridge stopped between moving the base and recording it finds the merge done.
        const since = row.outcome === null ? { unrecordedSince: row.baseCommit } : {};
        const result = await mergeBranch(target, mode, name, since);
        store.worktrees.setOutcome(id, "merged", result.commit);
        return { ...result, outcome: "merged" };
      }),
    );
  });

  router.post("/sessions/:id/worktree/keep", async (ctx) => {
    const id = ctx.params.id!;
    const { row } = targetOf(id);
    ctx.body = await inTurn(row.projectId, () => {
      store.worktrees.setOutcome(id, "kept", null);
      return Promise.resolve({ outcome: "kept" as const, branch: row.branch });
    });
  });

  router.post("/sessions/:id/worktree/discard", async (ctx) => {
    const id = ctx.params.id!;
    const { row, target } = targetOf(id);
    ctx.body = await inTurn(row.projectId, async () => {
      // Its folder and branch are about to go: its URLs, processes and calls under way end first.
      if (options.worktrees) await options.worktrees.endSession(id);
      else if (registry.getSession(id).enabled) registry.disableSession(id);
      await removeWorktree(
        { root: target.repo, identity: target.identity },
        { folder: row.path, branch: row.branch, deleteBranch: true },
      );
      store.worktrees.setOutcome(id, "discarded", null);
      return { outcome: "discarded" as const, branch: row.branch, path: row.path };
    });
  });
}
