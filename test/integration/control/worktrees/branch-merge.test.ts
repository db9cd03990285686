// The operator's review and merge of a worktree session's branch (server/control/worktrees/branch-*.ts) on real
// repositories the test makes: the branch against its base, merges (fast-forward, merge commit, squash), conflicts
// found before any working tree is touched, a dirty base working tree refused, a repository's merge driver and hook
// never run, and discard removing folder and branch.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { makeTempDir } from "../../../helpers/bridge.js";
import type { WorktreeTarget } from "../../../../server/control/worktrees/branch-git.js";
import { mergeBranch } from "../../../../server/control/worktrees/branch-merge.js";
import { readBranchReview } from "../../../../server/control/worktrees/branch-review.js";
import { removeWorktree } from "../../../../server/control/worktrees/worktree-git.js";
import { ControlErrorCode } from "../../../../server/control/errors.js";
import { git as runGit } from "../../../helpers/git-repo.js";

/** What Discard does: the worktree folder and its branch removed (worktree-git.ts). */
const discardWorktree = (t: WorktreeTarget) =>
  removeWorktree({ root: t.repo, identity: undefined }, { folder: t.path, branch: t.branch, deleteBranch: true });

const LINES = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`);

/** The test's own git (helpers/git-repo.ts), its output trimmed. */
const git = (dir: string, ...args: string[]): string => runGit(dir, ...args).trim();

/** A repository on main with shared.txt (20 lines), and `count` worktrees on branches urlbridge/s<n>. */
function makeRepo(count: number): { repo: string; targets: WorktreeTarget[] } {
  const repo = makeTempDir("wt-repo");
  git(repo, "init", "-q", "-b", "main");
  fs.writeFileSync(path.join(repo, "shared.txt"), `${LINES.join("\n")}\n`);
  git(repo, "add", ".");
  git(repo, "commit", "-qm", "base");
  const holder = makeTempDir("wt-folders");
  const targets = Array.from({ length: count }, (_, i) => {
    const wt = path.join(holder, `s${i + 1}`);
    git(repo, "worktree", "add", "-q", "-b", `urlbridge/s${i + 1}`, wt, "main");
    return { repo, path: wt, branch: `urlbridge/s${i + 1}`, baseRef: "main" };
  });
  return { repo, targets };
}

/** Changes line `n` (1-based) of shared.txt in a worktree and commits it there. */
function editLine(target: WorktreeTarget, n: number, text: string, commit = true): void {
  const file = path.join(target.path, "shared.txt");
  const lines = fs.readFileSync(file, "utf8").split("\n");
  lines[n - 1] = text;
  fs.writeFileSync(file, lines.join("\n"));
  if (commit) git(target.path, "commit", "-qam", `edit line ${n}`);
}

const code = (promise: Promise<unknown>) =>
  promise.then(
    () => "resolved",
    (e: { code?: string; paths?: string[] }) => ({ code: e.code, paths: e.paths }),
  );

describe("merging a worktree session's branch", () => {
  it("merges one branch fast-forward, another with a merge commit, discards a third; disk state matches", async () => {
    const { repo, targets } = makeRepo(3);
    const [a, b, c] = targets as [WorktreeTarget, WorktreeTarget, WorktreeTarget];
    editLine(a, 2, "from a");
    editLine(b, 18, "from b");
    editLine(c, 10, "from c");
    expect(fs.readFileSync(path.join(repo, "shared.txt"), "utf8")).toBe(`${LINES.join("\n")}\n`);

    const viewA = await readBranchReview(a, { max: 32 * 1024 });
    expect(viewA).toMatchObject({ ahead: 1, behind: 0, fastForward: true, conflicts: [], uncommitted: [] });
    expect(viewA.files).toEqual([{ path: "shared.txt", status: "M" }]);
    expect(viewA.diff!.content).toContain("+from a");

    const first = await mergeBranch(a, "auto", "a");
    expect(first.kind).toBe("fast-forward");
    expect(git(repo, "rev-parse", "main")).toBe(git(repo, "rev-parse", "urlbridge/s1"));
    // main is checked out in the repository's own working tree: the file there follows.
    expect(first.updatedWorktree).toBe(repo);
    expect(fs.readFileSync(path.join(repo, "shared.txt"), "utf8")).toContain("from a");

    const viewB = await readBranchReview(b);
    expect(viewB).toMatchObject({ ahead: 1, behind: 1, fastForward: false, conflicts: [] });
    const second = await mergeBranch(b, "auto", "b");
    expect(second.kind).toBe("merge");
    expect(git(repo, "rev-list", "--parents", "-n1", "main").split(" ")).toEqual([
      second.commit,
      first.commit,
      git(repo, "rev-parse", "urlbridge/s2"),
    ]);
    expect(git(repo, "log", "-1", "--format=%an <%ae>|%cn", "main")).toBe(
      "urlbridge operator <operator@urlbridge.invalid>|urlbridge operator",
    );
    const merged = fs.readFileSync(path.join(repo, "shared.txt"), "utf8");
    expect(merged).toContain("from a");
    expect(merged).toContain("from b");
    expect(git(repo, "status", "--porcelain")).toBe("");

    await discardWorktree(c);
    expect(fs.existsSync(c.path)).toBe(false);
    expect(git(repo, "for-each-ref", "--format=%(refname:short)", "refs/heads/urlbridge/").split("\n")).toEqual([
      "urlbridge/s1",
      "urlbridge/s2",
    ]);
    expect(git(repo, "worktree", "list", "--porcelain")).not.toContain(c.path);
    expect(merged).not.toContain("from c");
  });

  it("refuses a conflicting merge with the paths, before touching anything", async () => {
    const { repo, targets } = makeRepo(2);
    const [a, b] = targets as [WorktreeTarget, WorktreeTarget];
    editLine(a, 5, "a's line 5");
    editLine(b, 5, "b's line 5");
    await mergeBranch(a, "auto", "a");
    const before = git(repo, "rev-parse", "main");
    const view = await readBranchReview(b);
    expect(view.conflicts).toEqual(["shared.txt"]);
    expect(await code(mergeBranch(b, "merge", "b"))).toEqual({
      code: ControlErrorCode.mergeConflict,
      paths: ["shared.txt"],
    });
    expect(git(repo, "rev-parse", "main")).toBe(before);
    expect(git(repo, "status", "--porcelain")).toBe("");
    expect(fs.readFileSync(path.join(b.path, "shared.txt"), "utf8")).toContain("b's line 5");
  });

  it("refuses when main's working tree has uncommitted changes to a path the merge writes", async () => {
    const { repo, targets } = makeRepo(1);
    const [a] = targets as [WorktreeTarget];
    editLine(a, 3, "from a");
    fs.writeFileSync(path.join(repo, "shared.txt"), "operator's own edit\n");
    expect(await code(mergeBranch(a, "auto", "a"))).toEqual({
      code: ControlErrorCode.baseWorktreeDirty,
      paths: ["shared.txt"],
    });
    expect(fs.readFileSync(path.join(repo, "shared.txt"), "utf8")).toBe("operator's own edit\n");
    // A change elsewhere does not stand in the way.
    git(repo, "checkout", "--", "shared.txt");
    fs.writeFileSync(path.join(repo, "notes.txt"), "untracked, unrelated\n");
    expect((await mergeBranch(a, "auto", "a")).kind).toBe("fast-forward");
    expect(fs.readFileSync(path.join(repo, "notes.txt"), "utf8")).toBe("untracked, unrelated\n");
  });

  it("squashes into one commit with one parent; merge mode makes a merge commit even when it could fast-forward", async () => {
    const { repo, targets } = makeRepo(2);
    const [a, b] = targets as [WorktreeTarget, WorktreeTarget];
    editLine(a, 1, "a1");
    editLine(a, 20, "a20");
    const squash = await mergeBranch(a, "squash", "a");
    expect(squash.kind).toBe("squash");
    expect(git(repo, "rev-list", "--parents", "-n1", "main").split(" ")).toEqual([squash.commit, squash.previous]);
    expect(git(repo, "log", "-1", "--format=%s", "main")).toBe("Squash urlbridge/s1 (urlbridge session a)");
    // Squashing it again would add an empty commit: refused, main stays.
    expect(((await code(mergeBranch(a, "squash", "a"))) as { code: string }).code).toBe(
      ControlErrorCode.nothingToMerge,
    );
    expect(git(repo, "rev-parse", "main")).toBe(squash.commit);
    git(b.path, "merge", "-q", "--ff-only", "main");
    editLine(b, 7, "b7");
    const merge = await mergeBranch(b, "merge", "b");
    expect(merge.kind).toBe("merge");
    expect(git(repo, "rev-list", "--parents", "-n1", "main").split(" ")).toHaveLength(3);
  });

  it("refuses nothing to merge, and counts uncommitted work in the view", async () => {
    const { targets } = makeRepo(1);
    const [a] = targets as [WorktreeTarget];
    editLine(a, 4, "not committed", false);
    const view = await readBranchReview(a);
    expect(view).toMatchObject({ ahead: 0, uncommitted: ["shared.txt"] });
    expect(((await code(mergeBranch(a, "auto", "a"))) as { code: string }).code).toBe(ControlErrorCode.nothingToMerge);
  });

  it("does not run git status in a worktree whose .git file was rewritten to point elsewhere", async () => {
    const { targets } = makeRepo(1);
    const [a] = targets as [WorktreeTarget];
    editLine(a, 4, "not committed", false);
    const elsewhere = makeTempDir("elsewhere");
    git(elsewhere, "init", "-q");
    fs.writeFileSync(path.join(a.path, ".git"), `gitdir: ${path.join(elsewhere, ".git")}\n`);
    const review = await readBranchReview(a);
    expect(review).toMatchObject({ present: true, uncommitted: [] });
    expect(review.notice).toContain("no longer links it to this repository");
  });

  it("updates main through the ref alone when main is not checked out anywhere", async () => {
    const { repo, targets } = makeRepo(1);
    const [a] = targets as [WorktreeTarget];
    git(repo, "checkout", "-q", "--detach");
    editLine(a, 9, "a9");
    const result = await mergeBranch(a, "auto", "a");
    expect(result.updatedWorktree).toBeUndefined();
    expect(git(repo, "rev-parse", "main")).toBe(result.commit);
    expect(fs.readFileSync(path.join(repo, "shared.txt"), "utf8")).not.toContain("a9");
  });

  it("refuses a repository whose configuration names a merge driver, and runs no configured hook", async () => {
    const { repo, targets } = makeRepo(2);
    const [a, b] = targets as [WorktreeTarget, WorktreeTarget];
    const marker = path.join(makeTempDir("wt-marker"), "ran");
    const hook = path.join(repo, ".git", "hooks", "post-merge");
    fs.writeFileSync(hook, `#!/bin/sh\ntouch ${marker}\n`, { mode: 0o755 });
    editLine(a, 2, "a2");
    await mergeBranch(a, "auto", "a");
    expect(fs.existsSync(marker)).toBe(false);
    git(repo, "config", "merge.evil.driver", `touch ${marker}`);
    editLine(b, 15, "b15");
    // The branch is still shown, with why its merge is refused.
    const review = await readBranchReview(b);
    expect(review).toMatchObject({ ahead: 1, conflicts: [], files: [{ path: "shared.txt", status: "M" }] });
    expect(review.notice).toContain("merge driver evil");
    expect(((await code(mergeBranch(b, "auto", "b"))) as { code: string }).code).toBe(
      ControlErrorCode.mergeDriverConfigured,
    );
    expect(fs.existsSync(marker)).toBe(false);
  });
});
