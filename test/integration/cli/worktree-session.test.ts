// `urlbridge session create --worktree [--base] [--branch]` (issue 31): the CLI asks the control API for a session
// with its own git worktree, prints where it is, and words the API's refusal on one line.
import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeProjectDir, startTestBridge, TEST_OPERATOR_TOKEN, type TestBridge } from "../../helpers/bridge.js";
import { git, makeRepository } from "../../helpers/git-repo.js";
import { runCli } from "./run-cli.js";

let t: TestBridge;
let env: Record<string, string>;
let repo: string;

beforeAll(async () => {
  t = await startTestBridge();
  env = {
    URLBRIDGE_STATE_DIR: t.stateDir,
    URLBRIDGE_CONTROL_PORT: new URL(t.bridge.controlUrl).port,
    URLBRIDGE_OPERATOR_TOKEN: TEST_OPERATOR_TOKEN,
  };
  repo = makeRepository();
  git(repo, "branch", "release");
  expect((await runCli(["project", "add", "repo", repo, "--write"], env)).code).toBe(0);
  expect((await runCli(["project", "add", "plain", makeProjectDir("cli-plain")], env)).code).toBe(0);
});
afterAll(async () => t.close());

describe("urlbridge session create --worktree", () => {
  it("creates a session in its own worktree from the current branch and says where", async () => {
    const result = await runCli(["session", "create", "repo", "--name", "cli-wt", "--worktree"], env);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const line = result.stdout.split("\n").find((l) => l.startsWith("Worktree: "))!;
    expect(line).toMatch(
      /^Worktree: \/.*\/repo\.worktrees\/cli-wt on branch urlbridge\/cli-wt, from main \([0-9a-f]{12}\)$/,
    );
    expect(fs.existsSync(line.split(" ")[1]!)).toBe(true);
  });

  it("takes --base and --branch (either implies --worktree) and answers the worktree in --json", async () => {
    const result = await runCli(
      ["session", "create", "repo", "--base", "release", "--branch", "cli/feature", "--json"],
      env,
    );
    expect(result.code).toBe(0);
    const session = JSON.parse(result.stdout) as { worktree: { branch: string; baseRef: string; path: string } };
    expect(session.worktree).toMatchObject({ branch: "cli/feature", baseRef: "release" });
    expect(git(repo, "rev-parse", "cli/feature").trim()).toBe(git(repo, "rev-parse", "release").trim());
  });

  it("words a refusal on one line: a project that is not a git repository", async () => {
    const result = await runCli(["session", "create", "plain", "--worktree"], env);
    expect(result.code).not.toBe(0);
    expect(result.stdout).toBe("");
    expect(result.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(result.stderr).toMatch(/^urlbridge: not_a_repository: .*git init/);
  });
});
