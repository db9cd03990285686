// Real git repositories for tests: made with the git CLI as the test's user, then handed to the agent uid as an
// operator's project folder belongs to its user (giveToAgent). No fakes: the bridge runs the same git on them.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { giveToAgent, makeTempDir } from "./bridge.js";

/** Runs git in `dir` as the test (root): safe.directory covers folders handed to the agent uid. */
export function git(dir: string, ...args: string[]): string {
  return execFileSync(
    "git",
    ["-c", "safe.directory=*", "-c", "user.name=Test", "-c", "user.email=t@example.com", ...args],
    { cwd: dir, encoding: "utf8", env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" } },
  );
}

export function put(dir: string, name: string, content: string | Buffer): void {
  fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
  fs.writeFileSync(path.join(dir, name), content);
}

/**
 * A repository at <temp>/<name> on branch main with one commit (a.txt), owned by the agent uid. Its parent is a
 * temp folder of its own, so the default worktree folder beside it (<name>.worktrees) goes with the test's temp dirs.
 */
export function makeRepository(name = "repo"): string {
  const parent = makeTempDir("wt-parent");
  const repo = path.join(parent, name);
  fs.mkdirSync(repo);
  git(repo, "init", "-q", "-b", "main");
  put(repo, "a.txt", "one\n");
  git(repo, "add", ".");
  git(repo, "commit", "-q", "-m", "first");
  giveToAgent(parent);
  return repo;
}
