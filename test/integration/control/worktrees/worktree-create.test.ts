// Creating a session with its own git worktree through the control API (issue 31): on a new branch from the
// project's current branch or a named base, in the documented folder beside the project, as the project's owner;
// its calls work in the worktree; the refusals (not a repository, unknown base, existing branch) say what to do.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentGet, makeProjectDir, startTestBridge, TEST_AGENT_UID, type TestBridge } from "../../../helpers/bridge.js";
import { git, makeRepository, put } from "../../../helpers/git-repo.js";
import { openStore } from "../../../../server/store/index.js";

interface WorktreeView {
  path: string;
  branch: string;
  baseRef: string;
  baseCommit: string;
  outcome: string | null;
  stale: boolean;
  removing: boolean;
  diskUse?: { bytes: number; files: number; complete: boolean };
}
interface SessionView {
  id: string;
  name: string;
  initUrl: string;
  worktree?: WorktreeView;
}
type Body = Record<string, any>;

let tb: TestBridge;
let repo: string;
let projectId: string;

async function initOf(session: SessionView): Promise<{ r: string; m: string }> {
  const init = await agentGet<{ bases: { r: string; m: string } }>(session.initUrl);
  return init.bases;
}

beforeAll(async () => {
  tb = await startTestBridge();
  repo = makeRepository();
  git(repo, "branch", "release");
  const project = await tb.api<{ id: string }>("POST", "/api/projects", {
    name: "repo",
    root: repo,
    permissions: { write: true, terminal: false },
  });
  expect(project.status).toBe(201);
  projectId = project.body.id;
});
afterAll(async () => {
  await tb.close();
});

describe("POST /api/sessions with a worktree", () => {
  it("makes a worktree beside the project on urlbridge/<name> from the current branch, owned by the project's owner", async () => {
    const created = await tb.api<SessionView>("POST", "/api/sessions", { projectId, name: "Fix Bug", worktree: {} });
    expect(created.status).toBe(201);
    const wt = created.body.worktree!;
    expect(wt).toMatchObject({
      branch: "urlbridge/fix-bug",
      baseRef: "main",
      baseCommit: git(repo, "rev-parse", "main").trim(),
      outcome: null,
      stale: false,
      removing: false,
      path: path.join(path.dirname(repo), "repo.worktrees", "fix-bug"),
    });
    expect(fs.readFileSync(path.join(wt.path, "a.txt"), "utf8")).toBe("one\n");
    expect(fs.statSync(path.join(wt.path, "a.txt")).uid).toBe(
      process.getuid?.() === 0 ? TEST_AGENT_UID : process.getuid?.(),
    );
    expect(git(repo, "worktree", "list", "--porcelain")).toContain(`worktree ${wt.path}\n`);
    expect(git(wt.path, "symbolic-ref", "--short", "HEAD").trim()).toBe("urlbridge/fix-bug");
    // The contract row (migration 010, store/worktrees.ts), as the other half of issue 31 reads it.
    const store = openStore(tb.stateDir);
    try {
      expect(store.worktrees.get(created.body.id)).toMatchObject({
        sessionId: created.body.id,
        projectId,
        path: wt.path,
        branch: "urlbridge/fix-bug",
        baseRef: "main",
        outcome: null,
        outcomeAt: null,
        outcomeCommit: null,
      });
      expect(store.worktrees.byProject(projectId).map((r) => r.sessionId)).toContain(created.body.id);
      // Every call of the session resolves to the worktree as its root, with the row beside it (ctx.worktree).
      const cap = store.sessions.lookup(created.body.initUrl.split("/").pop()!);
      expect(cap).toMatchObject({ root: wt.path, worktree: { sessionId: created.body.id, path: wt.path } });
    } finally {
      store.close();
    }
  });

  it("runs the session's calls in its worktree: edits land there, not in the main working tree", async () => {
    const created = await tb.api<SessionView>("POST", "/api/sessions", { projectId, name: "edits", worktree: {} });
    const bases = await initOf(created.body);
    const read = await agentGet<Body>(`${bases.r}/r?path=a.txt`);
    expect(JSON.stringify(read)).toContain("one");
    const wrote = await agentGet<Body>(`${bases.m}/w?path=a.txt&raw=changed%0A`);
    expect(wrote, JSON.stringify(wrote)).toMatchObject({ ok: true });
    expect(fs.readFileSync(path.join(created.body.worktree!.path, "a.txt"), "utf8")).toBe("changed\n");
    expect(fs.readFileSync(path.join(repo, "a.txt"), "utf8")).toBe("one\n");
    // The version-control tools see the worktree's branch and its change.
    const status = await agentGet<Body>(`${bases.r}/v?op=status`);
    expect(status.ok).toBe(true);
    expect(JSON.stringify(status)).toContain("urlbridge/edits");
    expect(JSON.stringify(status)).toContain("a.txt");
    expect(git(repo, "status", "--porcelain")).toBe("");
  });

  it("starts from a named base branch", async () => {
    put(repo, "a.txt", "one\n");
    const created = await tb.api<SessionView>("POST", "/api/sessions", {
      projectId,
      name: "from release",
      worktree: { base: "release", branch: "work/from-release" },
    });
    expect(created.status).toBe(201);
    expect(created.body.worktree).toMatchObject({ baseRef: "release", branch: "work/from-release" });
    expect(git(repo, "rev-parse", "work/from-release").trim()).toBe(git(repo, "rev-parse", "release").trim());
  });

  it.each([
    [{ base: "no-such-branch" }, "unknown_base", 400, /no branch "no-such-branch"/],
    [{ branch: "release" }, "branch_exists", 409, /branch release exists/],
  ])("refuses %j with %s", async (worktree, code, status, message) => {
    const before = git(repo, "worktree", "list", "--porcelain");
    const sessions = (await tb.api<SessionView[]>("GET", "/api/sessions")).body.length;
    const refused = await tb.api<Body>("POST", "/api/sessions", { projectId, worktree });
    expect(refused.status).toBe(status);
    expect(refused.body.error.code).toBe(code);
    expect(refused.body.error.message).toMatch(message);
    expect(git(repo, "worktree", "list", "--porcelain")).toBe(before);
    expect((await tb.api<SessionView[]>("GET", "/api/sessions")).body.length).toBe(sessions);
  });

  it("refuses a project folder that is not a git repository, and one inside a repository", async () => {
    const plain = makeProjectDir("plain");
    const project = await tb.api<{ id: string }>("POST", "/api/projects", { name: "plain", root: plain });
    const refused = await tb.api<Body>("POST", "/api/sessions", { projectId: project.body.id, worktree: {} });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe("not_a_repository");
    expect(refused.body.error.message).toMatch(/git init/);
    fs.mkdirSync(path.join(repo, "sub"));
    const inner = await tb.api<{ id: string }>("POST", "/api/projects", {
      name: "inner",
      root: path.join(repo, "sub"),
    });
    const nested = await tb.api<Body>("POST", "/api/sessions", { projectId: inner.body.id, worktree: {} });
    expect(nested.body.error.code).toBe("not_a_repository");
    fs.rmdirSync(path.join(repo, "sub"));
  });

  it("refuses a malformed base before running git", async () => {
    const refused = await tb.api<Body>("POST", "/api/sessions", { projectId, worktree: { base: "--upload-pack=x" } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe("invalid_request");
  });
});
