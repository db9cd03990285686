// What the operator sees of a worktree session before deciding: its branch against its base (ahead, behind, whether
// a merge would fast-forward or conflict), the files the branch changed since the merge base, what is still
// uncommitted in the worktree, and the branch's diff paged as the review's diffs are (server/review/page.ts).
import fs from "node:fs";
import { pageOf, type DiffPage } from "../../review/page.js";
import { ControlError, ControlErrorCode } from "../errors.js";
import {
  branchGit,
  branchGitText,
  pinnedWorkingTree,
  refuseMergeDrivers,
  type BranchGitOptions,
  type WorktreeTarget,
} from "./branch-git.js";

export interface ChangedFile {
  path: string;
  /** git's letter: A added, M modified, D deleted, R renamed (from: the old path), T type changed. */
  status: string;
  from?: string;
}

export interface BranchReview {
  branch: string;
  baseRef: string;
  /** null when the branch is gone (discarded, or deleted by hand). */
  branchHead: string | null;
  baseHead: string;
  mergeBase: string | null;
  /** Commits on the branch that the base lacks, and on the base that the branch lacks. */
  ahead: number;
  behind: number;
  /** True when merging (auto) would only move the base forward. */
  fastForward: boolean;
  /** Paths a merge would conflict on now (git merge-tree); empty when it would merge cleanly. */
  conflicts: string[];
  /** Files the branch changed since its merge base with the base. */
  files: ChangedFile[];
  /** Paths changed in the worktree but not committed: a merge does not take them. */
  uncommitted: string[];
  /** The worktree folder exists. */
  present: boolean;
  /**
   * What could not be checked: conflicts in a repository that configures a merge driver (its merge is refused), or
   * uncommitted changes in a worktree whose .git file no longer links it to the repository.
   */
  notice?: string;
  /** The branch's diff against the merge base (optionally one path), this page of it. */
  diff?: DiffPage;
}

export interface DiffRequest {
  path?: string | undefined;
  offset?: number | undefined;
  max: number;
  fingerprint?: string | undefined;
}

/** The commit `ref` names (in the working tree `at` pins, for HEAD), or undefined when there is none. */
export async function resolveCommit(
  target: WorktreeTarget,
  ref: string,
  at: BranchGitOptions = {},
): Promise<string | undefined> {
  const out = await branchGit(target, ["rev-parse", "-q", "--verify", `${ref}^{commit}`], { ...at, accept: [1] });
  return out.code === 0 ? out.stdout.trim() : undefined;
}

export async function baseHeadOf(target: WorktreeTarget): Promise<string> {
  const head = await resolveCommit(target, `refs/heads/${target.baseRef}`);
  if (!head) {
    throw new ControlError(
      ControlErrorCode.worktreeBranchMissing,
      `The base branch ${target.baseRef} no longer exists in the repository; recreate it, or discard the session's work.`,
    );
  }
  return head;
}

/** The tree a merge of `theirs` into `ours` writes (null on conflict) and the conflicting paths; touches no working tree. */
export async function mergeTree(
  target: WorktreeTarget,
  ours: string,
  theirs: string,
): Promise<{ tree: string | null; conflicts: string[] }> {
  await refuseMergeDrivers(target);
  const out = await branchGit(
    target,
    ["merge-tree", "--write-tree", "--name-only", "--no-messages", "-z", ours, theirs],
    { accept: [1] },
  );
  const [tree, ...rest] = out.stdout.split("\0");
  const conflicts = [...new Set(rest.filter((p) => p !== ""))];
  return { tree: out.code === 0 ? tree! : null, conflicts };
}

function parseNameStatus(text: string): ChangedFile[] {
  const parts = text.split("\0");
  const files: ChangedFile[] = [];
  for (let i = 0; i < parts.length - 1;) {
    const status = parts[i++]!;
    if (status.startsWith("R") || status.startsWith("C")) {
      const from = parts[i++]!;
      files.push({ path: parts[i++]!, status: status[0]!, from });
    } else files.push({ path: parts[i++]!, status: status[0]! });
  }
  return files;
}

/**
 * Paths with changes in the working tree `at` pins (staged, unstaged or untracked), from git status. A nested
 * repository (a gitlink) is never entered: its own git would read its own config (--ignore-submodules=all outranks
 * .gitmodules' submodule.<name>.ignore, which diff.ignoreSubmodules does not).
 */
export async function dirtyPaths(target: WorktreeTarget, at: BranchGitOptions): Promise<string[]> {
  const out = await branchGit(
    target,
    ["status", "--porcelain=v1", "-z", "--untracked-files=all", "--ignore-submodules=all"],
    { ...at, checksOut: true },
  );
  const parts = out.stdout.split("\0");
  const paths: string[] = [];
  for (let i = 0; i < parts.length; i++) {
    const entry = parts[i]!;
    if (entry.length < 4) continue;
    paths.push(entry.slice(3));
    // A rename or copy names its source in the next field.
    if (entry[0] === "R" || entry[0] === "C") paths.push(parts[++i]!);
  }
  return paths;
}

async function diffPage(target: WorktreeTarget, from: string, to: string, request: DiffRequest): Promise<DiffPage> {
  const args = ["diff", "--no-color", "--no-ext-diff", "--no-textconv", "-M", from, to];
  if (request.path !== undefined) args.push("--", request.path);
  const page = pageOf((await branchGit(target, args)).stdout, request.offset ?? 0, request.max);
  if (request.fingerprint !== undefined && request.fingerprint !== page.fingerprint) {
    throw new ControlError(
      ControlErrorCode.diffChanged,
      "The branch changed since the first page of this diff; fetch it again from offset 0.",
    );
  }
  return page;
}

/** The review of one worktree session's branch; with `diff`, a page of the branch's diff as well. */
export async function readBranchReview(target: WorktreeTarget, diff?: DiffRequest): Promise<BranchReview> {
  const present = fs.existsSync(target.path);
  const baseHead = await baseHeadOf(target);
  const branchHead = (await resolveCommit(target, `refs/heads/${target.branch}`)) ?? null;
  // git status runs in the worktree only while its .git file is the link git made to this repository, and then with
  // that link pinned (GIT_DIR): a .git file the agent rewrote, before or after the check, never steers the owner's git.
  const pinned = present ? pinnedWorkingTree(target, target.path) : undefined;
  const uncommitted = pinned ? await dirtyPaths(target, pinned) : [];
  const unlinked =
    present && !pinned
      ? "The worktree's .git file no longer links it to this repository: its uncommitted changes are not shown."
      : undefined;
  const view = {
    branch: target.branch,
    baseRef: target.baseRef,
    branchHead,
    baseHead,
    uncommitted,
    present,
    ...(unlinked ? { notice: unlinked } : {}),
  };
  if (!branchHead)
    return { ...view, ahead: 0, behind: 0, fastForward: false, conflicts: [], files: [], mergeBase: null };
  const mergeBase = (await branchGitText(target, ["merge-base", baseHead, branchHead], { accept: [1] })) || null;
  const counts = await branchGitText(target, ["rev-list", "--left-right", "--count", `${baseHead}...${branchHead}`]);
  const [behind, ahead] = counts.split(/\s+/).map(Number) as [number, number];
  const from = mergeBase ?? baseHead;
  const files = parseNameStatus(
    (await branchGit(target, ["diff", "--name-status", "-z", "-M", from, branchHead])).stdout,
  );
  const fastForward = ahead > 0 && mergeBase === baseHead;
  let conflicts: string[] = [];
  let notice = unlinked;
  try {
    if (ahead > 0 && !fastForward) conflicts = (await mergeTree(target, baseHead, branchHead)).conflicts;
  } catch (error) {
    // The branch is still shown; only its merge is refused, and the notice says why.
    if (!(error instanceof ControlError) || error.code !== ControlErrorCode.mergeDriverConfigured) throw error;
    notice = error.message;
  }
  return {
    ...view,
    ...(notice ? { notice } : {}),
    mergeBase,
    ahead,
    behind,
    fastForward,
    conflicts,
    files,
    ...(diff ? { diff: await diffPage(target, from, branchHead, diff) } : {}),
  };
}
