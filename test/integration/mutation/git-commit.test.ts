// git_commit (/h, MCP git_commit): a worktree session commits on its own branch only, all of its changes or the
// paths named, as a journaled intent; refused in a session without a worktree, on another branch, with nothing to
// commit; the repository's hooks never run; other branches never move. Both transports, real repositories.
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentGet, giveToAgent, startTestBridge, type TestBridge } from "../../helpers/bridge.js";
import { git, makeRepository, put } from "../../helpers/git-repo.js";
import { connectMcpClient, tokenOfBase, type McpTestClient } from "../../helpers/mcp-clients.js";
import { url } from "./fixtures.js";

type Body = Record<string, any>;

/** Commits tried while the `.git` file is swapped: enough for the old check-then-read to lose the race. */
const SWAP_COMMITS = 40;

let tb: TestBridge;
let repo: string;
let worktree: string;
let m: string;
let plainM: string;
let plainId: string;
let mcp: McpTestClient;
let plainMcp: McpTestClient;
let marker: string;

const h = (params: Array<[string, string]>, base = m) => agentGet<Body>(url(base, "h", params));
const viaMcp = async (args: Record<string, unknown>, client = mcp) =>
  (await client.callTool({ name: "git_commit", arguments: args })).structuredContent as Body;

beforeAll(async () => {
  tb = await startTestBridge();
  repo = makeRepository();
  // In the git folder, which git_commit's git may write (the sandbox would stop a hook writing anywhere else, and
  // then this check could not fail).
  marker = path.join(repo, ".git", "hook-ran");
  // Hooks the repository configures, which an agent could plant too: none may run.
  for (const hook of ["pre-commit", "commit-msg", "post-commit"]) {
    fs.writeFileSync(path.join(repo, ".git", "hooks", hook), `#!/bin/sh\ntouch ${marker}\n`, { mode: 0o755 });
  }
  giveToAgent(path.dirname(repo));
  const project = await tb.api<{ id: string }>("POST", "/api/projects", {
    name: "repo",
    root: repo,
    permissions: { write: true, terminal: false },
  });
  const created = await tb.api<{ initUrl: string; worktree: { path: string } }>("POST", "/api/sessions", {
    projectId: project.body.id,
    name: "committer",
    worktree: {},
  });
  worktree = created.body.worktree.path;
  m = (await agentGet<{ bases: { m: string } }>(created.body.initUrl)).bases.m;
  const plain = await tb.session({ write: true, name: "plain" });
  plainM = plain.m!;
  plainId = plain.sessionId;
  mcp = await connectMcpClient(tb.bridge.dataUrl, tokenOfBase(m), { sdk: "v2" });
  plainMcp = await connectMcpClient(tb.bridge.dataUrl, tokenOfBase(plainM), { sdk: "v2" });
});

afterAll(async () => {
  await mcp?.close();
  await plainMcp?.close();
  await tb?.close();
});

describe("git_commit", () => {
  it("is offered to worktree sessions only: MCP tools/list, /manifest and the control plane's session view", async () => {
    const names = async (client: McpTestClient) => (await client.listTools()).tools.map((t) => t.name);
    expect(await names(mcp)).toContain("git_commit");
    expect(await names(plainMcp)).not.toContain("git_commit");
    const toolIds = (body: Body) => (body.tools as Array<{ id: string }>).map((t) => t.id);
    expect(toolIds(await agentGet<Body>(`${m}/manifest`))).toContain("git_commit");
    expect(toolIds(await agentGet<Body>(`${plainM}/manifest`))).not.toContain("git_commit");
    const views = (
      await tb.api<Array<{ id: string; name: string; tools: string[]; mcpTools: string[] }>>("GET", "/api/sessions")
    ).body;
    const plain = views.find((s) => s.id === plainId)!;
    expect(views.find((s) => s.name === "committer")).toMatchObject({
      tools: expect.arrayContaining(["git_commit"]),
      mcpTools: expect.arrayContaining(["git_commit"]),
    });
    expect([...plain.tools, ...plain.mcpTools]).not.toContain("git_commit");
  });

  it("refuses a session without a worktree that calls it anyway, with its own code over URLs", async () => {
    expect(await h([["message", "x"]], plainM)).toMatchObject({ ok: false, errorCode: "not_a_worktree_session" });
  });

  it("refuses with nothing to commit", async () => {
    expect(await h([["message", "empty"]])).toMatchObject({ ok: false, errorCode: "nothing_to_commit" });
    expect(await viaMcp({ message: "empty" })).toMatchObject({ ok: false, errorCode: "nothing_to_commit" });
  });

  it("commits only the paths named, leaving the rest uncommitted, and runs no hook", async () => {
    const main = git(repo, "rev-parse", "main").trim();
    for (const name of ["one.txt", "two.txt"]) {
      expect(await agentGet<Body>(url(m, "w", [["path", name]], `${name}\n`))).toMatchObject({ ok: true });
    }
    const body = await h([
      ["message", "only one"],
      ["path", "one.txt"],
    ]);
    expect(body).toMatchObject({
      ok: true,
      branch: "urlbridge/committer",
      files: [{ path: "/project/one.txt", status: "A" }],
    });
    expect(git(worktree, "log", "-1", "--format=%H %s", "HEAD").trim()).toBe(`${body.commit} only one`);
    expect(git(worktree, "status", "--porcelain").trim()).toBe("?? two.txt");
    expect(fs.existsSync(marker)).toBe(false);
    expect(git(repo, "rev-parse", "main").trim()).toBe(main);
    expect(git(repo, "status", "--porcelain")).toBe("");
  });

  it("commits everything over MCP once per idempotency key", async () => {
    const args = {
      name: "git_commit",
      arguments: { message: "the rest" },
      _meta: { "urlbridge/idempotencyKey": "rest-1" },
    };
    const first = (await mcp.callTool(args)).structuredContent as Body;
    const again = (await mcp.callTool(args)).structuredContent as Body;
    expect(first).toMatchObject({ ok: true, files: [{ path: "/project/two.txt", status: "A" }] });
    expect(again).toMatchObject({ ok: true, commit: first.commit, dedupe: "replayed" });
    expect(git(worktree, "rev-list", "--count", "main..HEAD").trim()).toBe("2");
    expect(git(worktree, "status", "--porcelain")).toBe("");
  });

  it("refuses when the worktree's HEAD is not the session's branch, and moves no other branch", async () => {
    git(worktree, "switch", "-q", "-c", "elsewhere");
    giveToAgent(path.dirname(repo));
    put(worktree, "three.txt", "three\n");
    giveToAgent(worktree);
    const elsewhere = git(repo, "rev-parse", "elsewhere").trim();
    const refused = await h([["message", "on the wrong branch"]]);
    expect(refused).toMatchObject({
      ok: false,
      errorCode: "not_on_session_branch",
      errorDetail: { branch: "urlbridge/committer", head: "refs/heads/elsewhere" },
    });
    expect(await viaMcp({ message: "on the wrong branch" })).toMatchObject({ errorCode: "not_on_session_branch" });
    expect(git(repo, "rev-parse", "elsewhere").trim()).toBe(elsewhere);
  });

  it("commits no nested repository: none of its git runs, untracked or already a gitlink", async () => {
    git(worktree, "switch", "-q", "urlbridge/committer");
    // What an agent can do in its worktree: a repository of its own whose config names a filter (a program) that
    // its own git runs when git status or commit checks it, and a .gitmodules that says to check it.
    const planted = path.join(repo, ".git", "filter-ran");
    const sub = path.join(worktree, "sub");
    fs.mkdirSync(sub);
    git(sub, "init", "-q");
    put(sub, "f", "one\n");
    git(sub, "add", "f");
    git(sub, "commit", "-qm", "nested");
    git(sub, "config", "filter.evil.clean", `touch ${planted}; cat`);
    put(sub, ".gitattributes", "* filter=evil\n");
    put(worktree, ".gitmodules", '[submodule "sub"]\n\tpath = sub\n\turl = ./sub\n\tignore = none\n');
    giveToAgent(path.dirname(repo));
    const head = git(worktree, "rev-parse", "HEAD").trim();
    const untracked = await h([["message", "with a nested repository"]]);
    expect(untracked).toMatchObject({
      ok: false,
      errorCode: "nested_repository",
      errorDetail: { paths: ["/project/sub"] },
    });
    // Recorded as a gitlink (as an earlier commit, or an operator, might have), with the file's time changed so that
    // git must read it again through the filter: still refused, nothing runs.
    git(worktree, "add", "sub");
    fs.utimesSync(path.join(sub, "f"), new Date(), new Date(Date.now() + 5_000));
    giveToAgent(path.dirname(repo));
    expect(
      await h([
        ["message", "again"],
        ["path", "three.txt"],
      ]),
    ).toMatchObject({ ok: false, errorCode: "nested_repository" });
    expect(fs.existsSync(planted)).toBe(false);
    expect(git(worktree, "rev-parse", "HEAD").trim()).toBe(head);
    git(worktree, "update-index", "--force-remove", "sub");
    fs.rmSync(sub, { recursive: true });
    fs.rmSync(path.join(worktree, ".gitmodules"));
  });

  it("commits nothing through a .git file rewritten to name the main repository's git folder", async () => {
    const dotGit = path.join(worktree, ".git");
    const link = fs.readFileSync(dotGit, "utf8");
    const main = git(repo, "rev-parse", "main").trim();
    put(worktree, "four.txt", "four\n");
    fs.writeFileSync(dotGit, `gitdir: ${path.join(repo, ".git")}\n`);
    giveToAgent(worktree);
    try {
      expect(await h([["message", "into the operator's branch"]])).toMatchObject({ ok: false });
      expect(git(repo, "rev-parse", "main").trim()).toBe(main);
      // The operator's index and working tree are as they were: nothing staged there.
      expect(git(repo, "status", "--porcelain")).toBe("");
      expect(git(repo, "ls-files")).not.toContain("four.txt");
    } finally {
      fs.writeFileSync(dotGit, link);
    }
  });

  it("commits nothing into the main repository while .git is swapped to name it (the link is pinned once verified)", async () => {
    const dotGit = path.join(worktree, ".git");
    const main = git(repo, "rev-parse", "main").trim();
    fs.copyFileSync(dotGit, `${dotGit}.real`);
    fs.writeFileSync(`${dotGit}.fake`, `gitdir: ${path.join(repo, ".git")}\n`);
    giveToAgent(worktree);
    const swap = `while :; do cp .git.fake .git.a; mv -f .git.a .git; cp .git.real .git.b; mv -f .git.b .git; done`;
    const swapper = spawn("sh", ["-c", swap], { cwd: worktree, stdio: "ignore" });
    try {
      for (let i = 0; i < SWAP_COMMITS; i++) {
        // Readable by the agent as the test writes it; no chown here, which would race the swapper's renames.
        put(worktree, `swap-${i}.txt`, `${i}\n`);
        await h([["message", `swap ${i}`]]);
      }
    } finally {
      swapper.kill("SIGKILL");
      await new Promise((resolve) => swapper.once("close", resolve));
      fs.copyFileSync(`${dotGit}.real`, dotGit);
    }
    expect(git(repo, "rev-parse", "main").trim()).toBe(main);
    expect(git(repo, "ls-files")).not.toContain("swap-");
  });
});
