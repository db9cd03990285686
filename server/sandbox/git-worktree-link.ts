// A project folder that is a linked git worktree has a `.git` file ("gitdir: <main>/.git/worktrees/<name>"), and
// git must read the main repository's metadata outside the project. The sandbox grants that folder read-only
// only for a link git itself registered: the worktree's metadata folder lies in <common>/worktrees/ and points
// back at this project's .git. A `.git` file an agent wrote cannot name another folder it could not already read:
// the back-pointer would have to be written inside that repository.
import fs from "node:fs";
import path from "node:path";

function realOrUndefined(p: string): string | undefined {
  try {
    return fs.realpathSync.native(p);
  } catch {
    return undefined;
  }
}

function readSmall(p: string): string | undefined {
  try {
    const stat = fs.lstatSync(p);
    if (!stat.isFile() || stat.size > 4096) return undefined;
    return fs.readFileSync(p, "utf8").trim();
  } catch {
    return undefined;
  }
}

export interface WorktreeLink {
  /** The main repository's git folder (the "common dir"). */
  common: string;
  /** The worktree's own git folder in it (<common>/worktrees/<name>): git runs with GIT_DIR pinned to it. */
  gitDir: string;
}

/**
 * The main repository's git folder (the "common dir") when `root` is a linked worktree git registered, else
 * undefined (an ordinary repository, no repository, or a `.git` file that does not hold up).
 */
export function linkedWorktreeCommonDir(root: string): string | undefined {
  return linkedWorktree(root)?.common;
}

/**
 * The link of `root` as verified once: every git run in it then pins GIT_DIR to `gitDir` (and GIT_WORK_TREE to
 * `root`), so git never reads the `.git` file again, which the agent could swap between this check and git's read.
 */
export function linkedWorktree(root: string): WorktreeLink | undefined {
  const dotGit = path.join(root, ".git");
  const pointer = readSmall(dotGit);
  const named = pointer?.startsWith("gitdir: ") ? pointer.slice(8).trim() : undefined;
  if (!named) return undefined;
  const metadata = realOrUndefined(path.resolve(root, named));
  if (!metadata || metadata === root || metadata.startsWith(`${root}/`)) return undefined;
  if (path.basename(path.dirname(metadata)) !== "worktrees") return undefined;
  const common = path.dirname(path.dirname(metadata));
  const commondir = readSmall(path.join(metadata, "commondir"));
  if (!commondir || realOrUndefined(path.resolve(metadata, commondir)) !== common) return undefined;
  const back = readSmall(path.join(metadata, "gitdir"));
  if (!back || realOrUndefined(path.resolve(metadata, back)) !== realOrUndefined(dotGit)) return undefined;
  return { common, gitDir: metadata };
}
