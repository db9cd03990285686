// Why an operator's worktree action (review, merge, keep, discard) was refused: a stable code the control plane
// answers as-is (server/control/errors.ts has the same codes with their HTTP status), a message saying what to
// do next, and the paths at fault where there are some.

export const WorktreeErrorCode = {
  /** The session has no worktree (it works in the project folder itself). */
  notAWorktreeSession: "not_a_worktree_session",
  /** The session's branch is gone (discarded, or deleted by hand). */
  worktreeBranchMissing: "worktree_branch_missing",
  /** The branch has no commit its base lacks. */
  nothingToMerge: "nothing_to_merge",
  /** Merging would conflict: the conflicting paths are listed, nothing was changed. */
  mergeConflict: "merge_conflict",
  /** The base branch is checked out with uncommitted changes to paths the merge would write. */
  baseWorktreeDirty: "base_worktree_dirty",
  /** The repository configures a merge driver (a program git would run); the bridge runs none. */
  mergeDriverConfigured: "merge_driver_configured",
  /** The base branch moved while the merge was being made; nothing was changed. */
  baseMoved: "base_moved",
  /** A later page of a diff was asked for with the fingerprint of a branch that has changed since. */
  diffChanged: "diff_changed",
  /** git itself failed (its first line of stderr is in the message). */
  gitFailed: "git_failed",
} as const;

export type WorktreeErrorCode = (typeof WorktreeErrorCode)[keyof typeof WorktreeErrorCode];

export class WorktreeError extends Error {
  override name = "WorktreeError";
  constructor(
    readonly code: WorktreeErrorCode,
    message: string,
    /** Paths at fault (conflicting, or dirty in the base's working tree), relative to the repository. */
    readonly paths?: string[],
  ) {
    super(message);
  }
}

/** Most paths an error lists; the message says how many there were. */
export const MAX_LISTED_PATHS = 200;

export function listed(paths: string[]): string[] {
  return paths.slice(0, MAX_LISTED_PATHS);
}
