// Merges a worktree session's branch into its base as the operator: fast-forward when possible (auto), else a merge
// commit, or a squash, the operator's choice. Conflicts are found with git merge-tree before any working tree is
// touched; a base branch checked out with uncommitted changes to a path the merge writes is refused; the base moves
// only from the head it was read at (compare-and-swap), so a concurrent change to it refuses instead of being lost.
import { ControlError, ControlErrorCode } from "../errors.js";
import {
  branchGit,
  branchGitText,
  pinnedWorkingTree,
  type BranchGitOptions,
  type WorktreeTarget,
} from "./branch-git.js";
import { baseHeadOf, dirtyPaths, mergeTree, resolveCommit } from "./branch-review.js";
import { MergeRefusal } from "./merge-refusal.js";

export type MergeMode = "auto" | "merge" | "squash";

export interface MergeResult {
  /**
   * What was done: the base fast-forwarded to the branch, a merge commit, or a squash commit; already-merged: nothing,
   * the base contained the branch already (a merge whose outcome was not recorded, or one made by hand).
   */
  kind: "fast-forward" | "merge" | "squash" | "already-merged";
  /** The base branch's new head. */
  commit: string;
  /** The base branch's head before. */
  previous: string;
  baseRef: string;
  branch: string;
  /** The working tree where the base branch is checked out and was updated, if any. */
  updatedWorktree?: string;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** The working tree (main or linked) that has `branch` checked out, if any. */
async function checkedOutAt(target: WorktreeTarget, branch: string): Promise<string | undefined> {
  const text = await branchGitText(target, ["worktree", "list", "--porcelain", "-z"]);
  let current: string | undefined;
  for (const line of text.split("\0")) {
    if (line.startsWith("worktree ")) current = line.slice("worktree ".length);
    else if (line === `branch refs/heads/${branch}`) return current;
  }
  return undefined;
}

async function changedBetween(target: WorktreeTarget, from: string, to: string): Promise<string[]> {
  const out = await branchGit(target, ["diff", "--name-only", "--no-renames", "-z", from, to]);
  return out.stdout.split("\0").filter((p) => p !== "");
}

/**
 * Where the base is checked out, pinned (GIT_DIR, GIT_WORK_TREE): only the project's own checkout. A linked worktree
 * (a session's, whose agent writes its `.git` file and files) is refused: git as the owner runs in none of them.
 */
function baseWorkingTree(target: WorktreeTarget, at: string): BranchGitOptions {
  const pinned = pinnedWorkingTree(target, at);
  if (pinned && pinned.cwd === pinnedWorkingTree(target, target.repo)?.cwd) return pinned;
  throw new ControlError(
    ControlErrorCode.baseInWorktree,
    `${target.baseRef} is checked out in the worktree ${at}, not in the project's own folder; the bridge does not run git as the owner there. Check ${target.baseRef} out in the project folder (or switch that worktree to another branch), or merge there by hand.`,
  );
}

/** Refuses when the base's checked-out working tree has changes to a path the merge would write. */
async function checkBaseWorktree(
  target: WorktreeTarget,
  at: string,
  pinned: BranchGitOptions,
  touched: string[],
): Promise<void> {
  const dirty = new Set(await dirtyPaths(target, pinned));
  const clash = touched.filter((p) => dirty.has(p));
  if (clash.length === 0) return;
  throw new MergeRefusal(
    ControlErrorCode.baseWorktreeDirty,
    `${target.baseRef} is checked out at ${at} with uncommitted changes to ${plural(clash.length, "path")} the merge would write (${clash.slice(0, 5).join(", ")}${clash.length > 5 ? ", …" : ""}); commit or stash them there, then merge again.`,
    clash,
  );
}

function baseMoved(target: WorktreeTarget): ControlError {
  return new ControlError(
    ControlErrorCode.baseMoved,
    `${target.baseRef} moved while the merge was being made; nothing was changed. Review the branch again and merge.`,
  );
}

/** Moves the base from `previous` to `next`: through its working tree when checked out, else the ref alone. */
async function advanceBase(target: WorktreeTarget, previous: string, next: string, at: BranchGitOptions | undefined) {
  if (at) {
    if ((await resolveCommit(target, "HEAD", at)) !== previous) throw baseMoved(target);
    await branchGit(target, ["merge", "--ff-only", "--no-edit", "--no-stat", "-q", next], { ...at, checksOut: true });
    return;
  }
  const ref = `refs/heads/${target.baseRef}`;
  const out = await branchGit(target, ["update-ref", "-m", `urlbridge: merge ${target.branch}`, ref, next, previous], {
    accept: [1, 128],
  });
  if (out.code !== 0) throw baseMoved(target);
}

/** The commit the base moves to, and what kind of merge that is. */
async function mergeCommit(
  target: WorktreeTarget,
  mode: MergeMode,
  previous: string,
  branchHead: string,
  sessionName: string,
): Promise<{ kind: MergeResult["kind"]; next: string }> {
  const mergeBase = await branchGitText(target, ["merge-base", previous, branchHead], { accept: [1] });
  if (mode === "auto" && mergeBase === previous) return { kind: "fast-forward", next: branchHead };
  const { tree, conflicts } = await mergeTree(target, previous, branchHead);
  if (!tree) {
    throw new MergeRefusal(
      ControlErrorCode.mergeConflict,
      `Merging ${target.branch} into ${target.baseRef} conflicts in ${plural(conflicts.length, "path")}; nothing was changed. Have the agent merge ${target.baseRef} into its branch and resolve them, then merge again.`,
      conflicts,
    );
  }
  const kind = mode === "squash" ? "squash" : "merge";
  // A branch squashed before adds nothing now: its changes are in the base already.
  if (kind === "squash" && tree === (await branchGitText(target, ["rev-parse", `${previous}^{tree}`]))) {
    throw new ControlError(
      ControlErrorCode.nothingToMerge,
      `${target.branch} changes nothing ${target.baseRef} does not already have (it was squashed into it before).`,
    );
  }
  const message =
    kind === "squash"
      ? `Squash ${target.branch} (urlbridge session ${sessionName})`
      : `Merge ${target.branch} (urlbridge session ${sessionName}) into ${target.baseRef}`;
  const parents = kind === "squash" ? [previous] : [previous, branchHead];
  const next = await branchGitText(target, ["commit-tree", tree, ...parents.flatMap((p) => ["-p", p]), "-m", message]);
  return { kind, next };
}

export interface MergeOptions {
  /**
   * Given while the session has no recorded outcome: the commit its branch was made from. A branch that moved from
   * it and whose tip the base already contains was merged (by a merge the bridge stopped before recording, or by
   * hand) and answers already-merged instead of nothing_to_merge. A squash leaves no such trace (docs/CONTROL_PLANE.md).
   */
  unrecordedSince?: string;
}

/** Merges the session's branch into its base; throws a ControlError (nothing changed) when it cannot. */
export async function mergeBranch(
  target: WorktreeTarget,
  mode: MergeMode,
  sessionName: string,
  options: MergeOptions = {},
): Promise<MergeResult> {
  const previous = await baseHeadOf(target);
  const branchHead = await resolveCommit(target, `refs/heads/${target.branch}`);
  if (!branchHead) {
    throw new ControlError(
      ControlErrorCode.worktreeBranchMissing,
      `The branch ${target.branch} no longer exists; there is nothing to merge.`,
    );
  }
  const ahead = Number(await branchGitText(target, ["rev-list", "--count", `${previous}..${branchHead}`]));
  // No commit ahead: the base contains the branch's tip (as merge-base --is-ancestor would say).
  if (ahead === 0 && options.unrecordedSince !== undefined && branchHead !== options.unrecordedSince) {
    return { kind: "already-merged", commit: previous, previous, baseRef: target.baseRef, branch: target.branch };
  }
  if (ahead === 0) {
    throw new ControlError(
      ControlErrorCode.nothingToMerge,
      `${target.branch} has no commit that ${target.baseRef} lacks. Work the agent has not committed is not merged: it commits with git_commit (/h), or you commit in its worktree.`,
    );
  }
  const at = await checkedOutAt(target, target.baseRef);
  const pinned = at === undefined ? undefined : baseWorkingTree(target, at);
  const { kind, next } = await mergeCommit(target, mode, previous, branchHead, sessionName);
  if (at && pinned) await checkBaseWorktree(target, at, pinned, await changedBetween(target, previous, next));
  await advanceBase(target, previous, next, pinned);
  return {
    kind,
    commit: next,
    previous,
    baseRef: target.baseRef,
    branch: target.branch,
    ...(at ? { updatedWorktree: at } : {}),
  };
}
