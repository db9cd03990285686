// Issue 31's must-show for parallel agents: three worktree sessions on one repository edit the same file at the same
// time through their own /e, each sees only its own change and the project's own working tree none; each commits
// with git_commit (/h, one over MCP); the operator reviews each branch, merges two (one fast-forward, one needing a
// merge commit) and discards the third through the control API; branches, worktrees and files on disk then match.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentGet, giveToAgent, startTestBridge, type TestBridge } from "../../../helpers/bridge.js";
import { git, makeRepository, put } from "../../../helpers/git-repo.js";
import { connectMcpClient, tokenOfBase, type McpTestClient } from "../../../helpers/mcp-clients.js";
import { url } from "../../mutation/fixtures.js";

type Body = Record<string, any>;
interface Created {
  id: string;
  name: string;
  initUrl: string;
  worktree: { path: string; branch: string };
}
interface Agent extends Created {
  m: string;
  r: string;
}

const LINES = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`);
const ORIGINAL = `${LINES.join("\n")}\n`;
/** Which line each session rewrites: far enough apart that a and b merge cleanly. */
const EDITS = { a: 2, b: 18, c: 10 } as const;

let tb: TestBridge;
let repo: string;
const agents: Record<"a" | "b" | "c", Agent> = {} as Record<"a" | "b" | "c", Agent>;
let mcp: McpTestClient;

beforeAll(async () => {
  tb = await startTestBridge();
  repo = makeRepository();
  put(repo, "shared.txt", ORIGINAL);
  git(repo, "add", ".");
  git(repo, "commit", "-q", "-m", "shared file");
  giveToAgent(path.dirname(repo));
  const project = await tb.api<{ id: string }>("POST", "/api/projects", {
    name: "repo",
    root: repo,
    permissions: { write: true, terminal: false },
  });
  expect(project.status).toBe(201);
  for (const name of ["a", "b", "c"] as const) {
    const created = await tb.api<Created>("POST", "/api/sessions", { projectId: project.body.id, name, worktree: {} });
    expect(created.status).toBe(201);
    const init = await agentGet<{ bases: { r: string; m: string } }>(created.body.initUrl);
    agents[name] = { ...created.body, ...init.bases };
  }
  mcp = await connectMcpClient(tb.bridge.dataUrl, tokenOfBase(agents.b.m), { sdk: "v2" });
});

afterAll(async () => {
  await mcp?.close();
  await tb?.close();
});

const review = (name: "a" | "b" | "c", query = "") =>
  tb.api<Body>("GET", `/api/sessions/${agents[name].id}/worktree${query}`);
const decide = (name: "a" | "b" | "c", action: string, body?: unknown) =>
  tb.api<Body>("POST", `/api/sessions/${agents[name].id}/worktree/${action}`, body ?? {});

describe("three worktree sessions on one repository", () => {
  it("edit the same file in parallel, each seeing only its own change, the project's tree untouched", async () => {
    const edits = await Promise.all(
      (["a", "b", "c"] as const).map((name) =>
        agentGet<Body>(
          url(agents[name].m, "e", [
            ["path", "shared.txt"],
            ["old", `line ${EDITS[name]}\n`],
            ["new", `line ${EDITS[name]} from ${name}\n`],
          ]),
        ),
      ),
    );
    for (const body of edits) expect(body).toMatchObject({ ok: true });
    for (const name of ["a", "b", "c"] as const) {
      const read = await agentGet<Body>(url(agents[name].r, "r", [["path", "shared.txt"]]));
      expect(read.ok).toBe(true);
      const text = JSON.stringify(read);
      for (const other of ["a", "b", "c"] as const) {
        expect(text.includes(`from ${other}`)).toBe(other === name);
      }
    }
    expect(fs.readFileSync(path.join(repo, "shared.txt"), "utf8")).toBe(ORIGINAL);
    expect(git(repo, "status", "--porcelain")).toBe("");
  });

  it("each commits on its own branch, over URLs and over MCP; a fetch repeated three times commits once", async () => {
    const commitA = url(agents.a.m, "h", [
      ["message", "a: line 2"],
      ["call", "commit-a-1"],
    ]);
    const answers = [await agentGet<Body>(commitA), await agentGet<Body>(commitA), await agentGet<Body>(commitA)];
    expect(answers[0]).toMatchObject({
      ok: true,
      branch: "urlbridge/a",
      files: [{ path: "/project/shared.txt", status: "M" }],
    });
    expect(new Set(answers.map((a) => a.commit)).size).toBe(1);
    expect(git(repo, "rev-list", "--count", "main..urlbridge/a").trim()).toBe("1");

    const viaMcp = await mcp.callTool({
      name: "git_commit",
      arguments: { message: "b: line 18" },
      _meta: { "urlbridge/idempotencyKey": "commit-b-1" },
    });
    expect(viaMcp.isError).toBeFalsy();
    expect(viaMcp.structuredContent).toMatchObject({ ok: true, branch: "urlbridge/b" });
    const c = await agentGet<Body>(url(agents.c.m, "h", [["message", "c: line 10"]]));
    expect(c).toMatchObject({ ok: true, branch: "urlbridge/c" });
    expect(git(repo, "log", "-1", "--format=%an <%ae>", "urlbridge/c").trim()).toBe(
      "c (urlbridge agent) <agent@urlbridge.invalid>",
    );
    expect(git(repo, "rev-parse", "main").trim()).toBe(git(repo, "rev-parse", "urlbridge/a~1").trim());
  });

  it("shows the operator each branch against main with its diff", async () => {
    const a = await review("a", "?diff=1");
    expect(a.status).toBe(200);
    expect(a.body).toMatchObject({
      branch: "urlbridge/a",
      baseRef: "main",
      ahead: 1,
      behind: 0,
      fastForward: true,
      conflicts: [],
      uncommitted: [],
      files: [{ path: "shared.txt", status: "M" }],
    });
    expect(a.body.diff.content).toContain("+line 2 from a");
  });

  it("merges a as a fast-forward and b with a merge commit, discards c; disk state matches", async () => {
    const first = await decide("a", "merge", { mode: "auto" });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ kind: "fast-forward", outcome: "merged", updatedWorktree: repo });
    expect(git(repo, "rev-parse", "main").trim()).toBe(git(repo, "rev-parse", "urlbridge/a").trim());

    expect((await review("b")).body).toMatchObject({ ahead: 1, behind: 1, fastForward: false, conflicts: [] });
    const second = await decide("b", "merge", { mode: "auto" });
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ kind: "merge", outcome: "merged" });
    const parents = git(repo, "rev-list", "--parents", "-n1", "main").trim().split(" ");
    expect(parents).toEqual([
      second.body.commit,
      git(repo, "rev-parse", "urlbridge/a").trim(),
      git(repo, "rev-parse", "urlbridge/b").trim(),
    ]);

    const discarded = await decide("c", "discard");
    expect(discarded.status).toBe(200);
    expect(discarded.body).toMatchObject({ outcome: "discarded", branch: "urlbridge/c" });

    const merged = fs.readFileSync(path.join(repo, "shared.txt"), "utf8");
    expect(merged).toBe(ORIGINAL.replace("line 2\n", "line 2 from a\n").replace("line 18\n", "line 18 from b\n"));
    expect(git(repo, "status", "--porcelain")).toBe("");
    expect(git(repo, "for-each-ref", "--format=%(refname:short)", "refs/heads/urlbridge/").trim().split("\n")).toEqual([
      "urlbridge/a",
      "urlbridge/b",
    ]);
    const listed = git(repo, "worktree", "list", "--porcelain");
    expect(listed).toContain(`worktree ${agents.a.worktree.path}\n`);
    expect(listed).toContain(`worktree ${agents.b.worktree.path}\n`);
    expect(listed).not.toContain(agents.c.worktree.path);
    expect(fs.existsSync(agents.c.worktree.path)).toBe(false);

    const sessions = await tb.api<Array<{ id: string; enabled: boolean; worktree?: { outcome: string | null } }>>(
      "GET",
      "/api/sessions",
    );
    const outcome = (name: "a" | "b" | "c") => sessions.body.find((s) => s.id === agents[name].id);
    expect(outcome("a")).toMatchObject({ enabled: true, worktree: { outcome: "merged" } });
    expect(outcome("b")).toMatchObject({ enabled: true, worktree: { outcome: "merged" } });
    expect(outcome("c")).toMatchObject({ enabled: false, worktree: { outcome: "discarded" } });
  });
});
