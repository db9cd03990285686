// Worktree sessions (issue 31): creating a session with its own git worktree on a new branch, deleting it (folder,
// git's record, and the branch unless the operator kept or merged it), finishing a delete a crash interrupted, and
// the per-project cap, stale folders and their pruning. Git runs as the project's owner (owner-git.ts).
import fs from "node:fs";
import type { Identity } from "../../sandbox/identity.js";
import type { Store } from "../../store/index.js";
import type { SessionWorktreeRow } from "../../store/worktrees.js";
import { ControlError, ControlErrorCode, notFound } from "../errors.js";
import type { Registry, SessionView } from "../registry.js";
import { createDiskUseCache, type DiskUseCache } from "./disk-use.js";
import {
  addWorktree,
  branchCommit,
  currentBranch,
  pruneWorktrees,
  removeWorktree,
  requireBranchName,
  requireRepository,
  type RepositoryTarget,
} from "./worktree-git.js";
import { defaultBranch, worktreePath } from "./worktree-layout.js";
import { worktreeViewOf, type WorktreeView } from "./worktree-view.js";

export interface WorktreeSessionsOptions {
  store: Store;
  /** Late-bound: the registry shows worktrees through this module's view. */
  registry: () => Registry;
  config: { dir: string | undefined; maxPerProject: number };
  /** Who owns a project's files: git runs as them (undefined: the bridge's own user). */
  ownerOf: (root: string) => Identity | undefined;
  /** Ends the session's processes and settles once they are gone, before its folder is removed under them. */
  endProcesses?: (sessionId: string) => Promise<unknown>;
  /** Settles once the session's journaled calls under way (a git_commit) have recorded their outcome. */
  settleCalls?: (sessionId: string) => Promise<unknown>;
  diskUse?: DiskUseCache;
}

export interface CreateWorktreeSessionInput {
  projectId: string;
  name?: string | undefined;
  /** The branch to start from (default: the one the project's HEAD is on) and the new branch's name. */
  worktree: { base?: string | undefined; branch?: string | undefined };
}

/** GET /api/projects/:id/repository: whether a session there may have its own worktree, and the default base. */
export interface ProjectRepository {
  repository: boolean;
  /** The branch HEAD is on (the default base), or null when HEAD is detached or there is no repository. */
  branch: string | null;
}

/** The worktree cap as /api/health `limits` shows it. */
export interface WorktreeLimits {
  maxPerProject: number;
  code: typeof ControlErrorCode.worktreeLimitReached;
}

export function createWorktreeSessions(options: WorktreeSessionsOptions) {
  const { store, config } = options;
  const diskUse = options.diskUse ?? createDiskUseCache();
  const targetOf = (projectId: string): RepositoryTarget => {
    const project = store.projects.get(projectId);
    if (!project) throw notFound("project", projectId);
    return { root: project.root, identity: options.ownerOf(project.root) };
  };
  const limitReached = () =>
    new ControlError(
      ControlErrorCode.worktreeLimitReached,
      `A project may have at most ${config.maxPerProject} worktree sessions (URLBRIDGE_MAX_WORKTREES_PER_PROJECT); delete one first.`,
    );

  async function create(input: CreateWorktreeSessionInput): Promise<SessionView> {
    const registry = options.registry();
    const target = targetOf(input.projectId);
    if (store.worktrees.countByProject(input.projectId) >= config.maxPerProject) throw limitReached();
    await requireRepository(target);
    const baseRef = input.worktree.base ?? (await currentBranch(target));
    const baseCommit = await branchCommit(target, baseRef);
    if (baseCommit === undefined) {
      throw new ControlError(
        ControlErrorCode.unknownBase,
        `The repository has no branch "${baseRef}"; give an existing local branch as the base (git branch lists them).`,
      );
    }
    const name = registry.sessionNameFor(input.projectId, input.name);
    const branch = input.worktree.branch ?? defaultBranch(name);
    await requireBranchName(target, branch);
    if ((await branchCommit(target, branch)) !== undefined) {
      throw new ControlError(
        ControlErrorCode.branchExists,
        `The branch ${branch} exists already; name the session (or its branch) differently, or delete that branch.`,
      );
    }
    const folder = worktreePath({ root: target.root, projectId: input.projectId, branch, configuredDir: config.dir });
    if (fs.existsSync(folder) || store.worktrees.list().some((w) => w.path === folder)) {
      throw new ControlError(
        ControlErrorCode.worktreeFolderExists,
        `The worktree folder ${folder} exists already; name the session (or its branch) differently, or remove that folder.`,
      );
    }
    // The rows first, under the cap, in one transaction; the folder after. Nobody holds the session's URLs until
    // this answers, and a crash in between leaves a row whose folder is missing: shown stale, removed by a delete.
    const view = registry.createSession({ projectId: input.projectId, name }, (session) => {
      if (store.worktrees.countByProject(input.projectId) >= config.maxPerProject) throw limitReached();
      store.worktrees.insert({
        sessionId: session.id,
        projectId: input.projectId,
        path: folder,
        branch,
        baseRef,
        baseCommit,
      });
    });
    try {
      await addWorktree(target, { folder, branch, commit: baseCommit });
    } catch (error) {
      // git may have stopped partway (killed at its timeout, a folder it could not make): the branch, a half-made
      // folder or a locked record would refuse the next create as branch_exists or worktree_folder_exists. Both
      // were checked absent above, so what is there now is this create's own; the rows go only once it is. When
      // the cleanup fails too, the session stays as an unfinished delete: a delete or the next start finishes it.
      const cleaned = await removeWorktree(target, { folder, branch, deleteBranch: true }).then(
        () => true,
        () => false,
      );
      if (cleaned) {
        store.transaction(() => {
          store.worktrees.remove(view.id);
          store.sessions.delete(view.id);
        });
      } else {
        store.worktrees.markRemoving(view.id);
        registry.disableSession(view.id);
      }
      throw error;
    }
    return registry.getSession(view.id);
  }

  /** Removes the worktree (and the branch unless kept or merged), then the rows. Safe to run again after a crash. */
  async function finishRemoval(row: SessionWorktreeRow): Promise<void> {
    const project = store.projects.get(row.projectId);
    if (project) {
      await removeWorktree(
        { root: project.root, identity: options.ownerOf(project.root) },
        { folder: row.path, branch: row.branch, deleteBranch: row.outcome !== "kept" && row.outcome !== "merged" },
      );
    }
    store.transaction(() => {
      store.worktrees.remove(row.sessionId);
      store.sessions.delete(row.sessionId);
    });
    diskUse.forget(row.sessionId);
  }

  /**
   * Before a session's folder (or branch) goes: ends its URLs, then its processes, and waits for its calls under way,
   * so that nothing of the session still writes in the folder or commits to the branch once this settles.
   */
  async function endSession(sessionId: string): Promise<void> {
    const registry = options.registry();
    if (registry.getSession(sessionId).enabled) registry.disableSession(sessionId);
    await options.endProcesses?.(sessionId);
    await options.settleCalls?.(sessionId);
  }

  /** DELETE /api/sessions/:id of a worktree session: ends its processes and URLs first, then the folder, then the rows. */
  async function remove(sessionId: string): Promise<void> {
    const row = store.worktrees.get(sessionId);
    if (!row) throw notFound("worktree session", sessionId);
    store.worktrees.markRemoving(sessionId);
    await endSession(sessionId);
    await finishRemoval(store.worktrees.get(sessionId)!);
  }

  return {
    create,
    remove,
    endSession,
    /** Whether the project's root is the top of a git repository, and the branch its HEAD is on. */
    async repository(projectId: string): Promise<ProjectRepository> {
      const target = targetOf(projectId);
      const repository = await requireRepository(target).then(
        () => true,
        () => false,
      );
      const branch = repository ? await currentBranch(target).catch(() => null) : null;
      return { repository, branch };
    },
    /** True when the project has worktree sessions (its root may not move under them). */
    inProject: (projectId: string): boolean => store.worktrees.countByProject(projectId) > 0,
    /** True when the session works in its own worktree (its delete goes through remove). */
    has: (sessionId: string): boolean => store.worktrees.get(sessionId) !== undefined,
    /** Deletes every worktree session of a project (before the project itself goes). */
    async removeProject(projectId: string): Promise<void> {
      for (const row of store.worktrees.byProject(projectId)) await remove(row.sessionId);
    },
    /**
     * At start: finishes the deletes a crash or a failed git step left under way; answers the sessions finished.
     * One that fails again is reported through `warn` and stays marked (the next start, or a delete, retries).
     */
    async finishInterrupted(warn: (message: string) => void): Promise<string[]> {
      const finished: string[] = [];
      for (const row of store.worktrees.list().filter((r) => r.removingAt !== null)) {
        try {
          await finishRemoval(row);
          finished.push(row.sessionId);
        } catch (error) {
          warn(`the delete of worktree session ${row.sessionId} (${row.path}) is unfinished: ${String(error)}`);
        }
      }
      return finished;
    },
    /** The project's worktree sessions whose folder is gone, after `git worktree prune` forgot them. */
    async prune(projectId: string): Promise<{ stale: string[] }> {
      await pruneWorktrees(targetOf(projectId));
      return {
        stale: store.worktrees
          .byProject(projectId)
          .filter((row) => !fs.existsSync(row.path))
          .map((r) => r.sessionId),
      };
    },
    view(sessionId: string): WorktreeView | undefined {
      const row = store.worktrees.get(sessionId);
      return row && worktreeViewOf(row, fs.existsSync(row.path) ? diskUse.get(sessionId, row.path) : undefined);
    },
    /** The view with a fresh disk measurement, awaited. */
    async measuredView(sessionId: string): Promise<WorktreeView | undefined> {
      const row = store.worktrees.get(sessionId);
      if (!row) return undefined;
      return worktreeViewOf(row, fs.existsSync(row.path) ? await diskUse.measure(sessionId, row.path) : undefined);
    },
    limits: (): WorktreeLimits => ({
      maxPerProject: config.maxPerProject,
      code: ControlErrorCode.worktreeLimitReached,
    }),
  };
}

export type WorktreeSessions = ReturnType<typeof createWorktreeSessions>;
