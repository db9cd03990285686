// `urlbridge worktree show|merge|keep|discard` against a running bridge (issue 31): the branch against its base and
// its diff, a fast-forward merge, a conflicting merge refused on one stderr line naming the path, a branch merged
// by hand recorded as already merged, keep, discard.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { giveToAgent, startTestBridge, TEST_OPERATOR_TOKEN, type TestBridge } from "../../helpers/bridge.js";
import { git, makeRepository, put } from "../../helpers/git-repo.js";
import { runCli } from "./run-cli.js";

interface Created {
  id: string;
  worktree: { path: string; branch: string };
}

let t: TestBridge;
let env: Record<string, string>;
let repo: string;
let projectId: string;
const created: Record<string, Created> = {};

/** Commits `text` as a.txt on the session's branch, in its worktree (as the agent's own commit would). */
function commitIn(name: string, text: string): void {
  const folder = created[name]!.worktree.path;
  put(folder, "a.txt", text);
  git(folder, "commit", "-q", "-am", `${name} changes a.txt`);
  giveToAgent(path.dirname(repo));
}

beforeAll(async () => {
  t = await startTestBridge();
  env = {
    URLBRIDGE_STATE_DIR: t.stateDir,
    URLBRIDGE_CONTROL_PORT: new URL(t.bridge.controlUrl).port,
    URLBRIDGE_OPERATOR_TOKEN: TEST_OPERATOR_TOKEN,
  };
  repo = makeRepository();
  const project = await t.api<{ id: string }>("POST", "/api/projects", {
    name: "repo",
    root: repo,
    permissions: { write: true, terminal: false },
  });
  projectId = project.body.id;
  for (const name of ["left", "right"]) {
    const session = await t.api<Created>("POST", "/api/sessions", { projectId: project.body.id, name, worktree: {} });
    expect(session.status).toBe(201);
    created[name] = session.body;
  }
  commitIn("left", "left\n");
  commitIn("right", "right\n");
});
afterAll(async () => t.close());

describe("urlbridge worktree", () => {
  it("shows a branch against its base, and its diff with --path", async () => {
    const shown = await runCli(["worktree", "show", "left"], env);
    expect(shown.stderr).toBe("");
    expect(shown.stdout).toContain("urlbridge/left (from main)  1 ahead, 0 behind main; merges as a fast-forward");
    expect(shown.stdout).toContain("    M a.txt");
    const diff = await runCli(["worktree", "show", "left", "--path", "a.txt"], env);
    expect(diff.stdout).toContain("-one\n+left");
  });

  it("merges as a fast-forward, then refuses the conflicting branch on one line naming the path", async () => {
    const merged = await runCli(["worktree", "merge", "left"], env);
    expect(merged.stderr).toBe("");
    expect(merged.stdout).toMatch(/^main is now [0-9a-f]{12} \(fast-forward of urlbridge\/left\)\.\n$/);
    expect(fs.readFileSync(path.join(repo, "a.txt"), "utf8")).toBe("left\n");

    const refused = await runCli(["worktree", "merge", "right", "--mode", "squash"], env);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe("");
    expect(refused.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(refused.stderr).toMatch(/^urlbridge: merge_conflict: .*\(paths: a\.txt\)\n$/);
    expect(fs.readFileSync(path.join(repo, "a.txt"), "utf8")).toBe("left\n");
  });

  it("records a branch merged by hand as already merged", async () => {
    const session = await t.api<Created>("POST", "/api/sessions", { projectId, name: "by-hand", worktree: {} });
    expect(session.status).toBe(201);
    put(session.body.worktree.path, "b.txt", "by hand\n");
    git(session.body.worktree.path, "add", "b.txt");
    git(session.body.worktree.path, "commit", "-q", "-m", "by-hand adds b.txt");
    git(repo, "merge", "-q", "--no-edit", "urlbridge/by-hand");
    giveToAgent(path.dirname(repo));
    const main = git(repo, "rev-parse", "main").trim();
    const merged = await runCli(["worktree", "merge", "by-hand"], env);
    expect(merged.stderr).toBe("");
    expect(merged.stdout).toBe(
      `urlbridge/by-hand was already merged into main (${main.slice(0, 12)}); recorded as merged.\n`,
    );
    expect(git(repo, "rev-parse", "main").trim()).toBe(main);
  });

  it("keeps one branch and discards the other", async () => {
    expect((await runCli(["worktree", "keep", "left"], env)).stdout).toContain("Kept urlbridge/left");
    const discarded = await runCli(["worktree", "discard", "right", "--json"], env);
    expect(JSON.parse(discarded.stdout)).toMatchObject({ outcome: "discarded", branch: "urlbridge/right" });
    expect(fs.existsSync(created.right!.worktree.path)).toBe(false);
    expect(git(repo, "for-each-ref", "--format=%(refname:short)", "refs/heads/urlbridge/").trim().split("\n")).toEqual([
      "urlbridge/by-hand",
      "urlbridge/left",
    ]);
  });

  it("refuses an unknown mode and a session without a worktree", async () => {
    const mode = await runCli(["worktree", "merge", "left", "--mode", "rebase"], env);
    expect(mode.code).toBe(1);
    expect(mode.stderr).toContain("--mode is auto, merge or squash");
    const plain = await t.api<{ id: string }>("POST", "/api/projects", {
      name: "plain",
      root: t.projectDir,
      permissions: { write: false, terminal: false },
    });
    expect(plain.status).toBe(201);
    await t.api("POST", "/api/sessions", { projectId: plain.body.id, name: "plain-session" });
    const none = await runCli(["worktree", "show", "plain-session"], env);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/^urlbridge: not_a_worktree_session: /);
  });
});
