// The project owner's git in a worktree session's folder (review, merge: server/control/worktrees/branch-*.ts) is
// steered by nothing the agent can write there: a nested repository's own config is never read (its filter never
// runs as the owner), a `.git` file rewritten to name the main repository points git nowhere, and a base branch
// checked out in a linked worktree is refused rather than merged there. Real repositories the test makes.
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { makeTempDir } from "../../../helpers/bridge.js";
import type { WorktreeTarget } from "../../../../server/control/worktrees/branch-git.js";
import { mergeBranch } from "../../../../server/control/worktrees/branch-merge.js";
import { readBranchReview } from "../../../../server/control/worktrees/branch-review.js";
import { ControlErrorCode } from "../../../../server/control/errors.js";
import { git as runGit } from "../../../helpers/git-repo.js";

/** The test's own git (helpers/git-repo.ts), its output trimmed. */
const git = (dir: string, ...args: string[]): string => runGit(dir, ...args).trim();

/** Reviews run while the `.git` file is swapped: enough for the old check-then-read to lose the race. */
const SWAP_ROUNDS = 150;

/** A repository on main (a.txt) and one session worktree on urlbridge/s1. */
function makeSession(): WorktreeTarget {
  const repo = makeTempDir("wt-repo");
  git(repo, "init", "-q", "-b", "main");
  fs.writeFileSync(path.join(repo, "a.txt"), "a\n");
  git(repo, "add", ".");
  git(repo, "commit", "-qm", "base");
  const wt = path.join(makeTempDir("wt-folders"), "s1");
  git(repo, "worktree", "add", "-q", "-b", "urlbridge/s1", wt, "main");
  return { repo, path: wt, branch: "urlbridge/s1", baseRef: "main" };
}

describe("the owner's git in a session's worktree", () => {
  it("never enters a nested repository the agent made: its filter does not run when the review reads status", async () => {
    const target = makeSession();
    const planted = path.join(makeTempDir("wt-marker"), "filter-ran");
    const sub = path.join(target.path, "sub");
    fs.mkdirSync(sub);
    git(sub, "init", "-q");
    fs.writeFileSync(path.join(sub, "f"), "one\n");
    git(sub, "add", "f");
    git(sub, "commit", "-qm", "nested");
    // Recorded as a gitlink (git_commit's add -A did this before), then the filter planted and the file touched so
    // that git must read it again, through the filter, to tell whether it changed.
    git(target.path, "add", "sub");
    git(target.path, "commit", "-qm", "gitlink");
    git(sub, "config", "filter.evil.clean", `touch ${planted}; cat`);
    fs.writeFileSync(path.join(sub, ".gitattributes"), "* filter=evil\n");
    fs.writeFileSync(path.join(target.path, "b.txt"), "b\n");
    for (const ignore of ["", "\tignore = none\n"]) {
      fs.writeFileSync(
        path.join(target.path, ".gitmodules"),
        `[submodule "sub"]\n\tpath = sub\n\turl = ./sub\n${ignore}`,
      );
      fs.utimesSync(path.join(sub, "f"), new Date(), new Date(Date.now() + 5_000 + ignore.length * 1000));
      const review = await readBranchReview(target);
      expect(review.uncommitted).toContain("b.txt");
      expect(fs.existsSync(planted)).toBe(false);
    }
  });

  it("reads no status through a .git file rewritten to name the main repository's git folder", async () => {
    const target = makeSession();
    const planted = path.join(makeTempDir("wt-marker"), "filter-ran");
    fs.writeFileSync(path.join(target.repo, "dirty.txt"), "the operator's own work\n");
    fs.writeFileSync(path.join(target.path, ".git"), `gitdir: ${path.join(target.repo, ".git")}\n`);
    fs.writeFileSync(path.join(target.path, ".gitattributes"), "* filter=evil\n");
    fs.writeFileSync(path.join(target.path, "a.txt"), "changed\n");
    git(target.repo, "config", "filter.evil.clean", `touch ${planted}; cat`);
    const review = await readBranchReview(target);
    expect(review.uncommitted).toEqual([]);
    expect(review.notice).toMatch(/no longer links it/);
    expect(fs.existsSync(planted)).toBe(false);
    expect(git(target.repo, "status", "--porcelain")).toBe("?? dirty.txt");
  });

  it("refuses a merge whose base branch is checked out in a linked worktree, and changes nothing", async () => {
    const target = makeSession();
    fs.writeFileSync(path.join(target.path, "a.txt"), "from the session\n");
    git(target.path, "commit", "-qam", "session work");
    // The operator moved the project's own checkout off main, and main is checked out in another worktree.
    git(target.repo, "switch", "-q", "-c", "other");
    const elsewhere = path.join(makeTempDir("wt-folders"), "base");
    git(target.repo, "worktree", "add", "-q", elsewhere, "main");
    const main = git(target.repo, "rev-parse", "main");
    await expect(mergeBranch(target, "auto", "s1")).rejects.toMatchObject({ code: ControlErrorCode.baseInWorktree });
    expect(git(target.repo, "rev-parse", "main")).toBe(main);
    expect(fs.readFileSync(path.join(elsewhere, "a.txt"), "utf8")).toBe("a\n");
  });

  it("never follows a .git file swapped back and forth while reviews run (the link is pinned once verified)", async () => {
    const target = makeSession();
    const planted = path.join(makeTempDir("wt-marker"), "filter-ran");
    // What the agent's background job would do: swap .git between the real link and one naming a git folder of its
    // own in the worktree, whose config names a filter (one the main repository's config does not, so nobody turns
    // it off) that the worktree's .gitattributes applies to a file git must read again.
    const own = path.join(target.path, ".own-git");
    fs.cpSync(path.join(target.repo, ".git"), own, { recursive: true });
    git(target.repo, `--git-dir=${own}`, "config", "filter.evil.clean", `touch ${planted}; cat`);
    fs.writeFileSync(path.join(target.path, ".gitattributes"), "* filter=evil\n");
    const dotGit = path.join(target.path, ".git");
    fs.copyFileSync(dotGit, `${dotGit}.real`);
    fs.writeFileSync(`${dotGit}.fake`, `gitdir: ${own}\n`);
    const swap = `while :; do cp .git.fake .git.a; mv -f .git.a .git; cp .git.real .git.b; mv -f .git.b .git; done`;
    const swapper = spawn("sh", ["-c", swap], { cwd: target.path, stdio: "ignore" });
    try {
      for (let i = 0; i < SWAP_ROUNDS && !fs.existsSync(planted); i++) {
        fs.utimesSync(path.join(target.path, "a.txt"), new Date(), new Date(Date.now() + (i + 1) * 1000));
        await readBranchReview(target);
      }
    } finally {
      swapper.kill("SIGKILL");
    }
    expect(fs.existsSync(planted)).toBe(false);
  });
});
