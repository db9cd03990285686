// A worktree session's life after creation (issue 31): deleting it removes its folder, git's record and its branch
// (the branch stays when the operator kept or merged it); a delete a crash interrupted finishes at the next start;
// deleting the project removes its worktrees; the per-project cap; a folder removed by hand shown stale and pruned.
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startTestBridge, type TestBridge } from "../../../helpers/bridge.js";
import { git, makeRepository } from "../../../helpers/git-repo.js";
import { openStore } from "../../../../server/store/index.js";

interface SessionView {
  id: string;
  worktree?: { path: string; branch: string; stale: boolean; diskUse?: { bytes: number; files: number } };
}
type Body = Record<string, any>;

const bridges: TestBridge[] = [];
async function start(env: Record<string, string> = {}, stateDir?: string) {
  const tb = await startTestBridge(env, stateDir ? { stateDir } : {});
  bridges.push(tb);
  return tb;
}
afterEach(async () => {
  await Promise.all(bridges.splice(0).map((b) => b.close()));
});

async function projectOn(tb: TestBridge, repo: string, name = "repo"): Promise<string> {
  const project = await tb.api<{ id: string }>("POST", "/api/projects", { name, root: repo });
  expect(project.status).toBe(201);
  return project.body.id;
}

async function worktreeSession(tb: TestBridge, projectId: string, name: string): Promise<SessionView> {
  const created = await tb.api<SessionView>("POST", "/api/sessions", { projectId, name, worktree: {} });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body;
}

const branches = (repo: string) => git(repo, "branch", "--format=%(refname:short)").trim().split("\n");
const listed = (repo: string) => git(repo, "worktree", "list", "--porcelain");

describe("deleting a worktree session", () => {
  it("removes its folder, git's record of it and its branch, and leaves the main working tree as it was", async () => {
    const tb = await start();
    const repo = makeRepository();
    const projectId = await projectOn(tb, repo);
    const session = await worktreeSession(tb, projectId, "gone");
    fs.writeFileSync(path.join(session.worktree!.path, "uncommitted.txt"), "work\n");
    expect((await tb.api("DELETE", `/api/sessions/${session.id}`)).status).toBe(204);
    expect(fs.existsSync(session.worktree!.path)).toBe(false);
    expect(listed(repo)).not.toContain(session.worktree!.path);
    expect(branches(repo)).toEqual(["main"]);
    expect((await tb.api("GET", `/api/sessions/${session.id}`)).status).toBe(404);
    expect(git(repo, "status", "--porcelain")).toBe("");
  });

  it("removes a worktree whose .git file the session rewrote, without following it elsewhere", async () => {
    const tb = await start();
    const repo = makeRepository();
    const other = makeRepository("other");
    const projectId = await projectOn(tb, repo);
    const session = await worktreeSession(tb, projectId, "forged");
    fs.writeFileSync(path.join(session.worktree!.path, ".git"), `gitdir: ${path.join(other, ".git")}\n`);
    expect((await tb.api("DELETE", `/api/sessions/${session.id}`)).status).toBe(204);
    expect(fs.existsSync(session.worktree!.path)).toBe(false);
    expect(branches(repo)).toEqual(["main"]);
    expect(listed(repo)).not.toContain(session.worktree!.path);
    expect(fs.readFileSync(path.join(other, "a.txt"), "utf8")).toBe("one\n");
    expect(branches(other)).toEqual(["main"]);
  });

  it.each(["kept", "merged"] as const)("keeps the branch of a session the operator %s", async (outcome) => {
    const tb = await start();
    const repo = makeRepository();
    const projectId = await projectOn(tb, repo);
    const session = await worktreeSession(tb, projectId, `was ${outcome}`);
    const store = openStore(tb.stateDir);
    store.worktrees.setOutcome(session.id, outcome, null);
    store.close();
    expect((await tb.api("DELETE", `/api/sessions/${session.id}`)).status).toBe(204);
    expect(fs.existsSync(session.worktree!.path)).toBe(false);
    expect(branches(repo)).toContain(session.worktree!.branch);
  });

  it("finishes at the next start a delete that stopped between its steps", async () => {
    const first = await start();
    const repo = makeRepository();
    const projectId = await projectOn(first, repo);
    const session = await worktreeSession(first, projectId, "interrupted");
    await first.close();
    bridges.splice(0);
    // As a crash after the mark (and after git removed the folder but not the branch) leaves it.
    const store = openStore(first.stateDir);
    store.worktrees.markRemoving(session.id);
    store.close();
    git(repo, "worktree", "remove", "--force", session.worktree!.path);
    expect(branches(repo)).toContain(session.worktree!.branch);
    const again = await start({}, first.stateDir);
    expect((await again.api("GET", `/api/sessions/${session.id}`)).status).toBe(404);
    expect(branches(repo)).toEqual(["main"]);
    expect(listed(repo)).not.toContain(session.worktree!.path);
  });

  it("removes every worktree of a project that is deleted", async () => {
    const tb = await start();
    const repo = makeRepository();
    const projectId = await projectOn(tb, repo);
    const a = await worktreeSession(tb, projectId, "a");
    const b = await worktreeSession(tb, projectId, "b");
    expect((await tb.api("DELETE", `/api/projects/${projectId}`)).status).toBe(204);
    for (const s of [a, b]) expect(fs.existsSync(s.worktree!.path)).toBe(false);
    expect(branches(repo)).toEqual(["main"]);
  });
});

describe("moving a project's root", () => {
  it("is refused while the project has worktree sessions, and allowed once they are deleted", async () => {
    const tb = await start();
    const repo = makeRepository();
    const elsewhere = makeRepository("elsewhere");
    const projectId = await projectOn(tb, repo);
    const session = await worktreeSession(tb, projectId, "pinned");
    const refused = await tb.api<Body>("PATCH", `/api/projects/${projectId}`, { root: elsewhere });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe("worktrees_exist");
    // A rename, or the same root, is not a move.
    expect((await tb.api("PATCH", `/api/projects/${projectId}`, { name: "renamed", root: repo })).status).toBe(200);
    expect((await tb.api("DELETE", `/api/sessions/${session.id}`)).status).toBe(204);
    expect((await tb.api("PATCH", `/api/projects/${projectId}`, { root: elsewhere })).status).toBe(200);
  });
});

describe("worktree limits", () => {
  it("refuses a worktree past URLBRIDGE_MAX_WORKTREES_PER_PROJECT and shows the cap in /api/health", async () => {
    const tb = await start({ URLBRIDGE_MAX_WORKTREES_PER_PROJECT: "2" });
    const repo = makeRepository();
    const projectId = await projectOn(tb, repo);
    await worktreeSession(tb, projectId, "one");
    await worktreeSession(tb, projectId, "two");
    const refused = await tb.api<Body>("POST", "/api/sessions", { projectId, name: "three", worktree: {} });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe("worktree_limit_reached");
    expect(branches(repo)).not.toContain("urlbridge/three");
    // A session without a worktree is not counted against it.
    expect((await tb.api("POST", "/api/sessions", { projectId, name: "plain" })).status).toBe(201);
    const health = await tb.api<Body>("GET", "/api/health");
    expect(health.body.limits.worktrees).toEqual({ maxPerProject: 2, code: "worktree_limit_reached" });
  });

  it("measures a worktree's disk use", async () => {
    const tb = await start();
    const repo = makeRepository();
    const projectId = await projectOn(tb, repo);
    const session = await worktreeSession(tb, projectId, "sized");
    fs.writeFileSync(path.join(session.worktree!.path, "big.bin"), Buffer.alloc(256 * 1024, 1));
    const view = await tb.api<Body>("GET", `/api/sessions/${session.id}/worktree`);
    expect(view.status).toBe(200);
    expect(view.body.diskUse.complete).toBe(true);
    expect(view.body.diskUse.bytes).toBeGreaterThanOrEqual(256 * 1024);
    expect(view.body.diskUse.files).toBeGreaterThanOrEqual(2);
    // The session list shows the last measurement without walking again.
    const listedView = (await tb.api<SessionView[]>("GET", "/api/sessions")).body.find((s) => s.id === session.id)!;
    expect(listedView.worktree!.diskUse!.bytes).toBe(view.body.diskUse.bytes);
  });

  it("shows a worktree folder removed by hand as stale, prunes git's record of it, and deletes the session", async () => {
    const tb = await start();
    const repo = makeRepository();
    const projectId = await projectOn(tb, repo);
    const session = await worktreeSession(tb, projectId, "by hand");
    fs.rmSync(session.worktree!.path, { recursive: true, force: true });
    const shown = await tb.api<SessionView>("GET", `/api/sessions/${session.id}`);
    expect(shown.body.worktree!.stale).toBe(true);
    expect(listed(repo)).toContain(session.worktree!.path);
    const pruned = await tb.api<Body>("POST", `/api/projects/${projectId}/worktrees/prune`);
    expect(pruned.status).toBe(200);
    expect(pruned.body.stale).toEqual([session.id]);
    expect(listed(repo)).not.toContain(session.worktree!.path);
    expect((await tb.api("DELETE", `/api/sessions/${session.id}`)).status).toBe(204);
    expect(branches(repo)).toEqual(["main"]);
  });
});
