// Merges a worktree session's branch into its base as the operator: fast-forward when possible (auto), else a merge
// commit, or a squash, the operator's choice. Conflicts are found with git merge-tree before any working tree is
// touched; a base branch checked out with uncommitted changes to a path the merge writes is refused; the base moves
// only from the head it was read at (compare-and-swap), so a concurrent change to it refuses instead of being lost.
import { configuredDrivers, ownerGit, ownerGitText } from "./owner-git.js";
import { listed, WorktreeError, WorktreeErrorCode } from "./worktree-errors.js";
import { baseHeadOf, dirtyPaths, mergeTree, resolveCommit, type WorktreeTarget } from "./worktree-view.js";

export type MergeMode = "auto" | "merge" | "squash";

export interface MergeResult {
  /** What was done: the base fast-forwarded to the branch, a merge commit, or a squash commit. */
  kind: "fast-forward" | "merge" | "squash";
  /** The base branch's new head. */
  commit: string;
  /** The base branch's head before. */
  previous: string;
  baseRef: string;
  branch: string;
  /** The working tree where the base branch is checked out and was updated, if any. */
  updatedWorktree?: string;
}

export interface MergeOptions {
  /** The session's name, for the commit message. */
  sessionName: string;
}

/** The working tree (main or linked) that has `branch` checked out, if any. */
async function checkedOutAt(target: WorktreeTarget, branch: string): Promise<string | undefined> {
  const text = await ownerGitText(target.repo, ["worktree", "list", "--porcelain", "-z"], {
    identity: target.identity,
  });
  let current: string | undefined;
  for (const line of text.split("\0")) {
    if (line.startsWith("worktree ")) current = line.slice("worktree ".length);
    else if (line === `branch refs/heads/${branch}`) return current;
  }
  return undefined;
}

async function changedBetween(target: WorktreeTarget, from: string, to: string): Promise<string[]> {
  const out = await ownerGit(target.repo, ["diff", "--name-only", "--no-renames", "-z", from, to], {
    identity: target.identity,
  });
  return out.stdout
    .toString("utf8")
    .split("\0")
    .filter((p) => p !== "");
}

async function commitTree(target: WorktreeTarget, tree: string, parents: string[], message: string): Promise<string> {
  const args = ["commit-tree", tree, ...parents.flatMap((p) => ["-p", p]), "-m", message];
  return ownerGitText(target.repo, args, { identity: target.identity });
}

/** Refuses when the base's checked-out working tree has changes to a path the merge would write. */
async function checkBaseWorktree(target: WorktreeTarget, at: string, touched: string[]): Promise<void> {
  const dirty = new Set(await dirtyPaths(at, target.identity));
  const clash = touched.filter((p) => dirty.has(p));
  if (clash.length === 0) return;
  throw new WorktreeError(
    WorktreeErrorCode.baseWorktreeDirty,
    `${target.baseRef} is checked out at ${at} with uncommitted changes to ${clash.length} path${clash.length > 1 ? "s" : ""} the merge would write (${listed(clash).slice(0, 5).join(", ")}${clash.length > 5 ? ", …" : ""}); commit or stash them there, then merge again.`,
    listed(clash),
  );
}

/** Moves the base from `previous` to `next`: through its working tree when checked out, else the ref alone. */
async function advanceBase(target: WorktreeTarget, previous: string, next: string, at: string | undefined) {
  if (at) {
    const head = await resolveCommit({ ...target, repo: at }, "HEAD");
    if (head !== previous) throw baseMoved(target);
    const filters = await configuredDrivers(at, "filter", { identity: target.identity });
    await ownerGit(at, ["merge", "--ff-only", "--no-edit", "--no-stat", next], {
      identity: target.identity,
      filters,
    });
    return;
  }
  const out = await ownerGit(
    target.repo,
    ["update-ref", "-m", `urlbridge: merge ${target.branch}`, `refs/heads/${target.baseRef}`, next, previous],
    { identity: target.identity, accept: [1, 128] },
  );
  if (out.code !== 0) throw baseMoved(target);
}

function baseMoved(target: WorktreeTarget): WorktreeError {
  return new WorktreeError(
    WorktreeErrorCode.baseMoved,
    `${target.baseRef} moved while the merge was being made; nothing was changed. Review the branch again and merge.`,
  );
}

/** Merges the session's branch into its base; throws a WorktreeError (nothing changed) when it cannot. */
export async function mergeWorktree(
  target: WorktreeTarget,
  mode: MergeMode,
  options: MergeOptions,
): Promise<MergeResult> {
  const previous = await baseHeadOf(target);
  const branchHead = await resolveCommit(target, `refs/heads/${target.branch}`);
  if (!branchHead) {
    throw new WorktreeError(
      WorktreeErrorCode.worktreeBranchMissing,
      `The branch ${target.branch} no longer exists; there is nothing to merge.`,
    );
  }
  const ahead = Number(
    await ownerGitText(target.repo, ["rev-list", "--count", `${previous}..${branchHead}`], {
      identity: target.identity,
    }),
  );
  if (ahead === 0) {
    throw new WorktreeError(
      WorktreeErrorCode.nothingToMerge,
      `${target.branch} has no commit that ${target.baseRef} lacks. Work the agent has not committed is not merged: it commits with git_commit (/h), or you commit in its worktree.`,
    );
  }
  const mergeBase = await ownerGitText(target.repo, ["merge-base", previous, branchHead], {
    identity: target.identity,
    accept: [1],
  });
  const canFastForward = mergeBase === previous;
  let kind: MergeResult["kind"];
  let next: string;
  if (mode === "auto" && canFastForward) {
    kind = "fast-forward";
    next = branchHead;
  } else {
    const { tree, conflicts } = await mergeTree(target, previous, branchHead);
    if (!tree) {
      throw new WorktreeError(
        WorktreeErrorCode.mergeConflict,
        `Merging ${target.branch} into ${target.baseRef} conflicts in ${conflicts.length} path${conflicts.length > 1 ? "s" : ""}; nothing was changed. Have the agent merge ${target.baseRef} into its branch and resolve them, then merge again.`,
        listed(conflicts),
      );
    }
    kind = mode === "squash" ? "squash" : "merge";
    const message =
      kind === "squash"
        ? `Squash ${target.branch} (urlbridge session ${options.sessionName})`
        : `Merge ${target.branch} (urlbridge session ${options.sessionName}) into ${target.baseRef}`;
    next = await commitTree(target, tree, kind === "squash" ? [previous] : [previous, branchHead], message);
  }
  const at = await checkedOutAt(target, target.baseRef);
  if (at) await checkBaseWorktree(target, at, await changedBetween(target, previous, next));
  await advanceBase(target, previous, next, at);
  return {
    kind,
    commit: next,
    previous,
    baseRef: target.baseRef,
    branch: target.branch,
    ...(at ? { updatedWorktree: at } : {}),
  };
}

/** Removes the session's worktree folder and its branch: the agent's work is dropped (the operator's choice). */
export async function discardWorktree(target: WorktreeTarget): Promise<{ removedBranch: boolean }> {
  await ownerGit(target.repo, ["worktree", "remove", "--force", "--force", target.path], {
    identity: target.identity,
    accept: [128],
  });
  // A folder removed by hand leaves git's record of it: prune it so the branch can be deleted.
  await ownerGit(target.repo, ["worktree", "prune"], { identity: target.identity });
  const exists = await resolveCommit(target, `refs/heads/${target.branch}`);
  if (exists) await ownerGit(target.repo, ["branch", "-D", target.branch], { identity: target.identity });
  return { removedBranch: exists !== undefined };
}
