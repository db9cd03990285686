// The git steps of worktree sessions, as the project's owner (owner-git.ts): what the repository is, whether a base
// and a branch exist, adding a worktree on a new branch, removing it (and its branch), pruning stale ones. Each
// failure is a ControlError from the catalog that says what to change.
import fs from "node:fs";
import path from "node:path";
import type { Identity } from "../../sandbox/identity.js";
import { ControlError, ControlErrorCode } from "../errors.js";
import { runOwnerGit, type OwnerGitResult } from "./owner-git.js";

export interface RepositoryTarget {
  /** The project's canonical root: it must be the top of a (non-bare) git repository. */
  root: string;
  identity: Identity | undefined;
}

function git(target: RepositoryTarget, args: string[], checksOut = false): Promise<OwnerGitResult> {
  // Only the project folder itself may be the repository, never one in a folder above it.
  return runOwnerGit(
    args,
    { cwd: target.root, identity: target.identity, env: { GIT_CEILING_DIRECTORIES: path.dirname(target.root) } },
    checksOut,
  );
}

function failed(what: string, result: OwnerGitResult): ControlError {
  const said = result.timedOut ? "it did not finish in time" : result.stderr.split("\n").slice(-3).join(" ").trim();
  return new ControlError(
    ControlErrorCode.worktreeGitFailed,
    `git could not ${what}: ${said || `exit ${String(result.code)}`}. Fix what git says, then try again.`,
  );
}

/** Refuses a root that is not the top of a git repository's working tree. */
export async function requireRepository(target: RepositoryTarget): Promise<void> {
  const top = await git(target, ["rev-parse", "--show-toplevel"]);
  const shown = top.stdout.trim();
  let real: string | undefined;
  try {
    real = shown ? fs.realpathSync(shown) : undefined;
  } catch {
    real = undefined;
  }
  if (top.code !== 0 || real !== target.root) {
    throw new ControlError(
      ControlErrorCode.notARepository,
      `${target.root} is not the top folder of a git repository, so a session there cannot have its own worktree. Run \`git init\` there (and commit), or create the session without a worktree.`,
    );
  }
}

/** The branch HEAD is on, the default base; refuses a detached HEAD (name a base then). */
export async function currentBranch(target: RepositoryTarget): Promise<string> {
  const head = await git(target, ["symbolic-ref", "--quiet", "--short", "HEAD"]);
  if (head.code !== 0 || head.stdout.trim() === "") {
    throw new ControlError(
      ControlErrorCode.unknownBase,
      `The repository at ${target.root} is not on a branch (detached HEAD); give the worktree a base branch.`,
    );
  }
  return head.stdout.trim();
}

/** A local branch's commit, or undefined when there is no such branch. */
export async function branchCommit(target: RepositoryTarget, branch: string): Promise<string | undefined> {
  const ref = await git(target, ["rev-parse", "--verify", "--quiet", `refs/heads/${branch}^{commit}`]);
  return ref.code === 0 ? ref.stdout.trim() : undefined;
}

/** Refuses a name git would not take as a branch (spaces, "..", a trailing ".lock"...). */
export async function requireBranchName(target: RepositoryTarget, branch: string): Promise<void> {
  const check = await git(target, ["check-ref-format", "--branch", branch]);
  if (check.code !== 0 || branch.startsWith("-")) {
    throw new ControlError(
      ControlErrorCode.invalidRequest,
      `"${branch}" is not a valid git branch name; give another.`,
    );
  }
}

/** `git worktree add -b <branch> <folder> <commit>`: the folder must not exist yet. */
export async function addWorktree(
  target: RepositoryTarget,
  input: { folder: string; branch: string; commit: string },
): Promise<void> {
  const added = await git(
    target,
    ["worktree", "add", "--quiet", "-b", input.branch, "--", input.folder, input.commit],
    true,
  );
  if (added.code !== 0) throw failed(`add a worktree at ${input.folder} on a new branch ${input.branch}`, added);
}

/**
 * Removes the worktree folder (forced: the session's uncommitted work goes with it, as deleting the session says),
 * prunes git's record of it, and deletes its branch when `deleteBranch`. Each step is safe to repeat: a start after
 * a crash runs the whole again.
 */
export async function removeWorktree(
  target: RepositoryTarget,
  input: { folder: string; branch: string; deleteBranch: boolean },
): Promise<void> {
  if (fs.existsSync(input.folder)) {
    const removed = await git(target, ["worktree", "remove", "--force", "--force", "--", input.folder]);
    // git refuses a worktree whose .git file no longer points back (the session's terminal may rewrite it): the
    // folder is the one this bridge made for the session, so it goes without git (no symbolic link is followed).
    if (removed.code !== 0 && fs.existsSync(input.folder)) fs.rmSync(input.folder, { recursive: true, force: true });
  }
  const pruned = await git(target, ["worktree", "prune"]);
  if (pruned.code !== 0) throw failed("prune its worktree records", pruned);
  if (!input.deleteBranch || (await branchCommit(target, input.branch)) === undefined) return;
  const deleted = await git(target, ["branch", "-D", "--", input.branch]);
  if (deleted.code !== 0 && (await branchCommit(target, input.branch)) !== undefined)
    throw failed(`delete the branch ${input.branch}`, deleted);
}

/** `git worktree prune`: forgets the worktrees whose folders are gone (removed by hand). */
export async function pruneWorktrees(target: RepositoryTarget): Promise<void> {
  const pruned = await git(target, ["worktree", "prune"]);
  if (pruned.code !== 0) throw failed("prune stale worktree records", pruned);
}
