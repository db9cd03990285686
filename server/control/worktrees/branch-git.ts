// git for the operator's review and merge of a worktree session's branch, through owner-git.ts (as the project's
// owner, hooks, fsmonitor, filters, signing and automatic gc off): a command's output or its catalogued failure,
// and the refusal of a repository that configures a merge driver (a program git would run while merging).
import fs from "node:fs";
import path from "node:path";
import { linkedWorktree } from "../../sandbox/git-worktree-link.js";
import type { Identity } from "../../sandbox/identity.js";
import { ControlError, ControlErrorCode } from "../errors.js";
import { runOwnerGit } from "./owner-git.js";

/** One worktree session as git knows it: explicit paths, so the engine reads nothing of the store. */
export interface WorktreeTarget {
  /** The project's own working tree (the main repository's checkout). */
  repo: string;
  /** The session's worktree folder. */
  path: string;
  /** The session's branch, without refs/heads/ (e.g. urlbridge/fix-login). */
  branch: string;
  /** The branch it was made from and merges into (e.g. main). */
  baseRef: string;
  /** The project owner when the bridge is root: git runs, and writes objects, as them. */
  identity?: Identity | undefined;
}

/** Who commits for the operator (docs/CONTROL_PLANE.md "Worktree sessions"). */
export const OPERATOR_COMMITTER = { name: "urlbridge operator", email: "operator@urlbridge.invalid" } as const;

const COMMITTER_ENV = {
  GIT_AUTHOR_NAME: OPERATOR_COMMITTER.name,
  GIT_AUTHOR_EMAIL: OPERATOR_COMMITTER.email,
  GIT_COMMITTER_NAME: OPERATOR_COMMITTER.name,
  GIT_COMMITTER_EMAIL: OPERATOR_COMMITTER.email,
};

export interface BranchGitOptions {
  /** Where git runs; default the repository. */
  cwd?: string;
  /** Exit codes other than 0 that are answers (merge-tree's 1: conflicts). */
  accept?: number[];
  /** The command writes a working tree: the repository's filter drivers go off first. */
  checksOut?: boolean;
  /** GIT_DIR and GIT_WORK_TREE pinned for a run in a working tree (a verified worktree link, never a `.git` file). */
  env?: Record<string, string>;
}

function realOrUndefined(p: string): string | undefined {
  try {
    return fs.realpathSync.native(p);
  } catch {
    return undefined;
  }
}

/**
 * Where git runs in the working tree `at` of `target`'s repository, pinned: the main checkout with its `.git`
 * folder, or a linked worktree whose `.git` file git-worktree-link.ts verified names this repository's
 * <common>/worktrees/<name>. git then never reads a `.git` file, which an agent could rewrite after the check to
 * point the owner's git at another repository (or at a folder with a config of its own). undefined: neither holds.
 */
export function pinnedWorkingTree(target: WorktreeTarget, at: string): BranchGitOptions | undefined {
  const common = realOrUndefined(path.join(target.repo, ".git"));
  const tree = realOrUndefined(at);
  if (!common || !tree) return undefined;
  let gitDir: string | undefined;
  if (tree === realOrUndefined(target.repo)) gitDir = fs.statSync(common).isDirectory() ? common : undefined;
  else {
    const link = linkedWorktree(tree);
    gitDir = link?.common === common ? link.gitDir : undefined;
  }
  return gitDir ? { cwd: tree, env: { GIT_DIR: gitDir, GIT_WORK_TREE: tree } } : undefined;
}

/** Runs git for `target`; answers its exit code and stdout, or throws worktree_git_failed. */
export async function branchGit(
  target: WorktreeTarget,
  args: string[],
  options: BranchGitOptions = {},
): Promise<{ code: number; stdout: string }> {
  const result = await runOwnerGit(
    args,
    { cwd: options.cwd ?? target.repo, identity: target.identity, env: { ...COMMITTER_ENV, ...options.env } },
    options.checksOut ?? false,
  );
  if (result.code === 0 || (result.code !== null && options.accept?.includes(result.code))) {
    return { code: result.code, stdout: result.stdout };
  }
  const said = result.timedOut ? "it did not finish in time" : (result.stderr.split("\n")[0] ?? "").trim();
  throw new ControlError(
    ControlErrorCode.worktreeGitFailed,
    `git ${args[0]} failed: ${said.slice(0, 300) || `exit ${String(result.code)}`}. Fix what git says, then try again.`,
  );
}

/** branchGit's stdout, trimmed. */
export async function branchGitText(target: WorktreeTarget, args: string[], options: BranchGitOptions = {}) {
  return (await branchGit(target, args, options)).stdout.trim();
}

/** Refuses a repository that configures a merge driver: merging would run that program as the project owner. */
export async function refuseMergeDrivers(target: WorktreeTarget): Promise<void> {
  const listed = await branchGit(target, ["config", "-z", "--name-only", "--get-regexp", "^merge\\..*\\.driver$"], {
    accept: [1],
  });
  const drivers = listed.stdout
    .split("\0")
    .map((key) => /^merge\.(.+)\.driver$/s.exec(key)?.[1])
    .filter((name): name is string => name !== undefined);
  if (drivers.length === 0) return;
  throw new ControlError(
    ControlErrorCode.mergeDriverConfigured,
    `The repository configures the merge driver${drivers.length > 1 ? "s" : ""} ${drivers.join(", ")} (a program git would run); the bridge runs none. Merge this branch in a terminal of your own.`,
  );
}
