// The version-control tool (/v, MCP git) on real repositories the test makes: status, diff, log, show and refs on
// both transports, paging whose fingerprint refuses a changed repository, a non-ASCII path, a binary file, a
// conflict, a non-repository folder and a repository's configured programs that must not run.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  agentGet,
  giveToAgent,
  makeTempDir,
  startTestBridge,
  type AgentSession,
  type TestBridge,
} from "../../helpers/bridge.js";
import { wrapSession, type McpTestClient } from "../../helpers/mcp-clients.js";
import { createSearchGate } from "../../../server/kernel/search/search-gate.js";
import type { ToolContext } from "../../../server/kernel/tool/definition.js";
import { createGitRunner } from "../../../server/kernel/vcs/git-process.js";
import { createGitTool } from "../../../server/kernel/vcs/git.js";

const UNICODE = "dössier/naïve café.txt";

let tb: TestBridge;
let repo: string;
let agent: AgentSession;
let mcp: McpTestClient;
let mcpClose: () => Promise<void>;

type Body = Record<string, any>;

function git(dir: string, ...args: string[]): string {
  // The test (root) works on folders handed to the agent uid: git would refuse them as another user's.
  return execFileSync(
    "git",
    ["-c", "safe.directory=*", "-c", "user.name=Test", "-c", "user.email=t@example.com", ...args],
    {
      cwd: dir,
      encoding: "utf8",
      env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
    },
  );
}

function put(dir: string, name: string, content: string | Buffer): void {
  fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
  fs.writeFileSync(path.join(dir, name), content);
}

/** Hands everything to the agent uid again (files the test wrote as root). */
function settle(dir: string): void {
  giveToAgent(dir);
}

async function v(query: string, base = agent.r): Promise<Body> {
  return agentGet<Body>(`${base}/v?${query}`);
}

async function viaMcp(args: Record<string, unknown>): Promise<Body> {
  const result = await mcp.callTool({ name: "git", arguments: args });
  return result.structuredContent as Body;
}

beforeAll(async () => {
  tb = await startTestBridge();
  repo = tb.projectDir;
  git(repo, "init", "-q", "-b", "main");
  put(repo, "a.txt", "one\ntwo\nthree\n");
  put(repo, UNICODE, "bonjour\n");
  put(repo, "logo.bin", Buffer.from([0, 1, 2, 3, 0, 255]));
  git(repo, "add", ".");
  git(repo, "commit", "-q", "-m", "first");
  git(repo, "tag", "v1");
  put(repo, "a.txt", "one\ntwo\nthree\nfour\n");
  git(repo, "commit", "-q", "-am", "second: four");
  git(repo, "branch", "topic");
  // Working state: a staged change, an unstaged change, an untracked file, a changed binary.
  put(repo, UNICODE, "bonjour\nau revoir\n");
  git(repo, "add", UNICODE);
  put(repo, "a.txt", "ONE\ntwo\nthree\nfour\n");
  put(repo, "logo.bin", Buffer.from([0, 1, 2, 4, 0, 255]));
  put(repo, "new file.txt", "fresh\n");
  agent = await tb.session();
  const wrapped = wrapSession(tb, agent);
  mcp = await wrapped.connect("r", { sdk: "v2" });
  mcpClose = () => wrapped.close();
});

afterAll(async () => {
  await mcpClose();
});

describe("op=status", () => {
  it("lists staged, unstaged and untracked paths, a non-ASCII one included, on both transports", async () => {
    const expected = {
      ok: true,
      op: "status",
      head: { branch: "main", commit: git(repo, "rev-parse", "HEAD").trim() },
    };
    for (const body of [await v("op=status"), await viaMcp({ op: "status" })]) {
      expect(body).toMatchObject(expected);
      expect(body.entries).toEqual(
        expect.arrayContaining([
          { path: UNICODE, state: "staged", change: "modified" },
          { path: "a.txt", state: "unstaged", change: "modified" },
          { path: "logo.bin", state: "unstaged", change: "modified" },
          { path: "new file.txt", state: "untracked", change: "untracked" },
        ]),
      );
      expect(body.entries).toHaveLength(4);
    }
  });

  it("shows a merge conflict as conflict rows", async () => {
    const dir = makeTempDir("git-conflict");
    git(dir, "init", "-q", "-b", "main");
    put(dir, "f.txt", "base\n");
    git(dir, "add", ".");
    git(dir, "commit", "-q", "-m", "base");
    git(dir, "checkout", "-q", "-b", "other");
    put(dir, "f.txt", "theirs\n");
    git(dir, "commit", "-q", "-am", "theirs");
    git(dir, "checkout", "-q", "main");
    put(dir, "f.txt", "ours\n");
    git(dir, "commit", "-q", "-am", "ours");
    expect(() => git(dir, "merge", "-q", "other")).toThrow();
    const other = await tb.session({ root: dir, name: "conflict" });
    const body = await agentGet<Body>(`${other.r}/v?op=status`);
    expect(body.entries).toEqual([{ path: "f.txt", state: "conflict", change: "both_modified" }]);
  });
});

describe("op=diff", () => {
  it("lists unstaged files with line counts and flags a binary file", async () => {
    const body = await v("op=diff");
    expect(body).toMatchObject({ ok: true, op: "diff", against: "working tree vs index (unstaged)" });
    expect(body.files).toEqual([
      { path: "a.txt", added: 1, deleted: 1 },
      { path: "logo.bin", binary: true },
    ]);
  });

  it("answers staged changes, the working tree against a ref, and two refs", async () => {
    expect((await v("op=diff&staged=1")).files).toEqual([{ path: UNICODE, added: 1, deleted: 0 }]);
    const againstTag = await v("op=diff&rev=v1");
    expect(againstTag.against).toBe("working tree vs v1");
    expect(againstTag.files.map((f: Body) => f.path)).toEqual(["a.txt", UNICODE, "logo.bin"]);
    const between = await viaMcp({ op: "diff", rev: "v1", to: "main" });
    expect(between).toMatchObject({
      ok: true,
      against: "v1 vs main",
      files: [{ path: "a.txt", added: 1, deleted: 0 }],
    });
  });

  it("answers one file's patch with path=, a non-ASCII path included", async () => {
    const body = await v(`op=diff&staged=1&path=${encodeURIComponent(UNICODE)}`);
    expect(body.path).toBe(`/project/${UNICODE}`);
    expect(body.patch).toContain(`+++ b/${UNICODE}`);
    expect(body.patch).toContain("+au revoir");
    const mcpBody = await viaMcp({ op: "diff", path: "a.txt" });
    expect(mcpBody.patch).toContain("-one\n+ONE");
    const binary = await v("op=diff&path=logo.bin");
    expect(binary.patch).toContain("Binary files a/logo.bin and b/logo.bin differ");
  });

  it("compares a branch with its merge base (rev=base...branch), as an operator's review does", async () => {
    const dir = makeTempDir("git-range");
    git(dir, "init", "-q", "-b", "main");
    put(dir, "f.txt", "base\n");
    git(dir, "add", ".");
    git(dir, "commit", "-q", "-m", "base");
    git(dir, "checkout", "-q", "-b", "topic");
    put(dir, "topic.txt", "topic\n");
    git(dir, "add", ".");
    git(dir, "commit", "-q", "-m", "topic");
    git(dir, "checkout", "-q", "main");
    put(dir, "main.txt", "main moved on\n");
    git(dir, "add", ".");
    git(dir, "commit", "-q", "-m", "main");
    const other = await tb.session({ root: dir, name: "range" });
    const threeDot = await agentGet<Body>(`${other.r}/v?op=diff&rev=main...topic`);
    expect(threeDot).toMatchObject({ ok: true, files: [{ path: "topic.txt", added: 1, deleted: 0 }] });
    expect(threeDot.against).toContain("merge base");
    const twoDot = await agentGet<Body>(`${other.r}/v?op=diff&rev=main..topic`);
    expect(twoDot.files.map((f: Body) => f.path)).toEqual(["main.txt", "topic.txt"]);
    expect(await agentGet<Body>(`${other.r}/v?op=diff&rev=main...topic&staged=1`)).toMatchObject({
      ok: false,
      errorCode: "conflicting_parameters",
    });
  });

  it("refuses staged=1 with to=", async () => {
    expect(await v("op=diff&staged=1&rev=v1&to=main")).toMatchObject({
      ok: false,
      errorCode: "conflicting_parameters",
    });
  });
});

describe("paging with fingerprints", () => {
  it("follows next through the file list, and refuses a page after the working tree changed", async () => {
    const first = await v("op=diff&rev=v1&limit=2");
    expect(first.files).toHaveLength(2);
    expect(first.page).toMatchObject({ offset: 0, total: 3, nextOffset: 2 });
    const second = await agentGet<Body>(first.page.next);
    expect(second.files.map((f: Body) => f.path)).toEqual(["logo.bin"]);
    expect(second.page.fingerprint).toBe(first.page.fingerprint);
    put(repo, "a.txt", "ONE\ntwo\nTHREE\nfour\n");
    settle(repo);
    try {
      expect(await agentGet<Body>(first.page.next)).toMatchObject({ ok: false, errorCode: "page_changed" });
    } finally {
      put(repo, "a.txt", "ONE\ntwo\nthree\nfour\n");
    }
  });

  it("pages the log with a path filter, and refuses a page after a commit moved the branch", async () => {
    const dir = makeTempDir("git-log");
    git(dir, "init", "-q", "-b", "main");
    for (let i = 1; i <= 5; i++) {
      put(dir, i % 2 === 0 ? "even.txt" : "odd.txt", `${i}\n`);
      git(dir, "add", ".");
      git(dir, "commit", "-q", "-m", `commit ${i}`);
    }
    const other = await tb.session({ root: dir, name: "log" });
    const first = await agentGet<Body>(`${other.r}/v?op=log&limit=2`);
    expect(first.commits.map((c: Body) => c.subject)).toEqual(["commit 5", "commit 4"]);
    const second = await agentGet<Body>(first.page.next);
    expect(second.commits.map((c: Body) => c.subject)).toEqual(["commit 3", "commit 2"]);
    const odd = await agentGet<Body>(`${other.r}/v?op=log&path=odd.txt`);
    expect(odd.commits.map((c: Body) => c.subject)).toEqual(["commit 5", "commit 3", "commit 1"]);
    expect(odd.page.nextOffset).toBeUndefined();
    git(dir, "commit", "-q", "--allow-empty", "-m", "commit 6");
    expect(await agentGet<Body>(second.page.next)).toMatchObject({ ok: false, errorCode: "page_changed" });
    expect(await agentGet<Body>(`${other.r}/v?op=log&offset=2`)).toMatchObject({
      ok: false,
      errorCode: "missing_parameter",
    });
  });

  it("pages a long file text at a revision over MCP with offset and fingerprint", async () => {
    const dir = makeTempDir("git-text");
    git(dir, "init", "-q", "-b", "main");
    const long = Array.from({ length: 2000 }, (_, i) => `line ${i} ${"é".repeat(10)}`).join("\n");
    put(dir, "long.txt", long);
    git(dir, "add", ".");
    git(dir, "commit", "-q", "-m", "long");
    const other = await tb.session({ root: dir, name: "text" });
    const client = await wrapSession(tb, other).connect("r", { sdk: "v2" });
    try {
      let text = "";
      let body = (await client.callTool({ name: "git", arguments: { op: "show", path: "long.txt" } }))
        .structuredContent as Body;
      expect(body.page.next).toBeUndefined();
      text += body.text;
      while (body.page.nextOffset !== undefined) {
        body = (
          await client.callTool({
            name: "git",
            arguments: {
              op: "show",
              path: "long.txt",
              offset: body.page.nextOffset,
              fingerprint: body.page.fingerprint,
            },
          })
        ).structuredContent as Body;
        text += body.text;
      }
      expect(text).toBe(long);
    } finally {
      await client.close();
    }
  });
});

describe("the MCP outputSchema", () => {
  it("holds every op's answer, as the 2025-era client checks it", async () => {
    const client = await wrapSession(tb, agent).connect("r", { sdk: "v1" });
    try {
      for (const args of [
        { op: "status" },
        { op: "diff" },
        { op: "diff", path: "a.txt" },
        { op: "log", limit: 1 },
        { op: "show", path: "logo.bin" },
        { op: "show", path: "a.txt", rev: "v1" },
        { op: "refs" },
        { op: "log", rev: "nosuch" },
      ]) {
        const result = await client.callTool({ name: "git", arguments: args });
        expect((result.structuredContent as Body).ok, JSON.stringify(args)).toBe(args.rev !== "nosuch");
      }
    } finally {
      await client.close();
    }
  });
});

describe("op=log, op=show, op=refs", () => {
  it("shows a file as a revision holds it, and a binary file's size only", async () => {
    expect(await v("op=show&path=a.txt&rev=v1")).toMatchObject({ ok: true, text: "one\ntwo\nthree\n", rev: "v1" });
    expect(await viaMcp({ op: "show", path: UNICODE })).toMatchObject({ ok: true, text: "bonjour\n" });
    const binary = await v("op=show&path=logo.bin");
    expect(binary).toMatchObject({ ok: true, binary: true, size: 6 });
    expect(binary.text).toBeUndefined();
  });

  it("lists the log on both transports", async () => {
    for (const body of [await v("op=log"), await viaMcp({ op: "log" })]) {
      expect(body.commits.map((c: Body) => c.subject)).toEqual(["second: four", "first"]);
      expect(body.commits[1].parents).toEqual([]);
    }
  });

  it("lists branches and tags, the current branch marked", async () => {
    for (const body of [await v("op=refs"), await viaMcp({ op: "refs" })]) {
      expect(body.refs.map((r: Body) => [r.name, r.kind, r.current ?? false])).toEqual([
        ["main", "branch", true],
        ["topic", "branch", false],
        ["v1", "tag", false],
      ]);
    }
  });

  it("answers unknown_revision, path_not_found and not_a_file with what to do next", async () => {
    // In a URL ~ is an escape: HEAD~1 is written HEAD~~1 (or HEAD^).
    expect((await v("op=show&path=a.txt&rev=HEAD~~1")).text).toBe("one\ntwo\nthree\n");
    expect((await v("op=show&path=a.txt&rev=HEAD^")).text).toBe("one\ntwo\nthree\n");
    expect(await v("op=log&rev=nosuch")).toMatchObject({ ok: false, errorCode: "unknown_revision" });
    expect(await v("op=show&path=a.txt&rev=nosuch")).toMatchObject({ ok: false, errorCode: "unknown_revision" });
    expect(await v("op=diff&rev=nosuch")).toMatchObject({ ok: false, errorCode: "unknown_revision" });
    expect(await v("op=show&path=new%20file.txt")).toMatchObject({ ok: false, errorCode: "path_not_found" });
    expect(await v("op=show&path=d%C3%B6ssier")).toMatchObject({ ok: false, errorCode: "not_a_file" });
    expect(await v("op=show&path=../etc/passwd")).toMatchObject({ ok: false, errorCode: "path_outside_root" });
    expect(await v("op=log&rev=--output%3D/tmp/x")).toMatchObject({ ok: false, errorCode: "invalid_parameter" });
  });
});

describe("not a repository", () => {
  it("answers not_a_repository for a plain folder and for a folder inside a repository", async () => {
    const plain = makeTempDir("git-plain");
    put(plain, "x.txt", "x\n");
    const inner = path.join(repo, "dössier");
    for (const root of [plain, inner]) {
      const other = await tb.session({ root, name: `plain-${root === plain ? "folder" : "inner"}` });
      for (const query of ["op=status", "op=diff", "op=diff&staged=1", "op=log", "op=refs", "op=show&path=x.txt"]) {
        const body = await agentGet<Body>(`${other.r}/v?${query}`);
        expect({ query, body }).toMatchObject({ query, body: { ok: false, errorCode: "not_a_repository" } });
        expect(body.repairHint).toContain("/r");
      }
    }
  });
});

describe("output bound", () => {
  it("refuses an answer over 8 MiB with git_output_too_large, naming how to narrow it", async () => {
    const dir = makeTempDir("git-large");
    git(dir, "init", "-q", "-b", "main");
    put(
      dir,
      "big.txt",
      "x"
        .repeat(1023)
        .concat("\n")
        .repeat(9 * 1024),
    );
    git(dir, "add", ".");
    git(dir, "commit", "-q", "-m", "big");
    const other = await tb.session({ root: dir, name: "large" });
    const body = await agentGet<Body>(`${other.r}/v?op=show&path=big.txt`);
    expect(body).toMatchObject({ ok: false, errorCode: "git_output_too_large", retryable: false });
    expect(body.repairHint).toContain("path=");
  });
});

describe("the bridge's search slots", () => {
  it("are shared with /g: with every slot taken and no room to wait, /v answers search_busy and runs no git", async () => {
    const gate = createSearchGate({ slots: 1, maxQueued: 0 });
    const tool = createGitTool(createGitRunner(undefined), gate);
    const ctx = {
      project: { id: "p", name: "p", root: repo },
      session: { id: "s", name: "s", generation: 1 },
      signal: new AbortController().signal,
    } as unknown as ToolContext;
    const release = await gate.acquire();
    try {
      await expect(
        Promise.resolve(tool.execute({ op: "status", staged: false, offset: 0, limit: 50 }, ctx)),
      ).rejects.toMatchObject({ code: "search_busy" });
    } finally {
      release();
    }
    expect(await tool.execute({ op: "refs", staged: false, offset: 0, limit: 50 }, ctx)).toMatchObject({ ok: true });
  });
});

describe("ownership", () => {
  it.skipIf(process.getuid?.() !== 0)(
    "reads a repository owned by another user than the agent identity git runs as (no dubious-ownership refusal)",
    async () => {
      const dir = makeTempDir("git-owned");
      git(dir, "init", "-q", "-b", "main");
      put(dir, "f.txt", "one\n");
      git(dir, "add", ".");
      git(dir, "commit", "-q", "-m", "first");
      const other = await tb.session({ root: dir, name: "owned" });
      // The session handed the folder to the agent uid; give it back to root, world-readable.
      execFileSync("chown", ["-R", "0:0", dir]);
      fs.chmodSync(dir, 0o755);
      expect(await agentGet<Body>(`${other.r}/v?op=log`)).toMatchObject({ ok: true, commits: [{ subject: "first" }] });
    },
  );
});

describe("a linked worktree as the project", () => {
  it("reads the main repository's metadata through the worktree's .git file, and refuses a forged one", async () => {
    const main = makeTempDir("git-main");
    git(main, "init", "-q", "-b", "main");
    put(main, "shared.txt", "base\n");
    git(main, "add", ".");
    git(main, "commit", "-q", "-m", "base");
    const parent = makeTempDir("git-wt-parent");
    fs.chmodSync(parent, 0o755);
    const worktree = path.join(parent, "feature");
    git(main, "worktree", "add", "-q", "-b", "feature", worktree);
    put(worktree, "shared.txt", "feature edit\n");
    giveToAgent(main);
    const linked = await tb.session({ root: worktree, name: "worktree" });
    const status = await agentGet<Body>(`${linked.r}/v?op=status`);
    expect(status).toMatchObject({ ok: true, head: { branch: "feature" } });
    expect(status.entries).toEqual([{ path: "shared.txt", state: "unstaged", change: "modified" }]);
    expect((await agentGet<Body>(`${linked.r}/v?op=log`)).commits.map((c: Body) => c.subject)).toEqual(["base"]);
    // The main working tree is untouched by the worktree's edit.
    expect(fs.readFileSync(path.join(main, "shared.txt"), "utf8")).toBe("base\n");

    // A .git file naming a repository's folder directly (not a registered worktree) opens nothing outside.
    const forged = makeTempDir("git-forged");
    put(forged, ".git", `gitdir: ${path.join(main, ".git")}\n`);
    const forgedSession = await tb.session({ root: forged, name: "forged" });
    expect(await agentGet<Body>(`${forgedSession.r}/v?op=log`)).toMatchObject({
      ok: false,
      errorCode: "not_a_repository",
    });
    // Nor does one naming the real worktree's metadata, whose back-pointer names the real worktree.
    put(forged, ".git", `gitdir: ${path.join(main, ".git", "worktrees", "feature")}\n`);
    expect(await agentGet<Body>(`${forgedSession.r}/v?op=log`)).toMatchObject({
      ok: false,
      errorCode: "not_a_repository",
    });
  });
});

describe("a repository's configured programs", () => {
  it("runs no filter, textconv, external diff or fsmonitor the repository configures, and keeps its core.worktree inside", async () => {
    const dir = makeTempDir("git-hostile");
    const marker = path.join(dir, ".git", "fsmonitor-ran");
    git(dir, "init", "-q", "-b", "main");
    // "ev=il": a driver name that `-c filter.ev=il.clean=` would split into another key, keeping the filter.
    put(dir, ".gitattributes", "*.txt filter=evil diff=evil\n*.md filter=ev=il\n");
    put(dir, "g.md", "one\n");
    put(dir, "f.txt", "one\n");
    git(dir, "add", ".");
    git(dir, "commit", "-q", "-m", "base");
    // Each would change what the agent sees if git ran it: FILTERED in the status and diff, TEXTCONV or
    // EXTERNAL in the patch. The fsmonitor hook would also leave a marker (were it not read-only).
    for (const [key, value] of [
      ["filter.evil.clean", "sed s/two/FILTERED/"],
      ["filter.evil.smudge", "sed s/one/FILTERED/"],
      ["filter.ev=il.clean", "sed s/two/FILTERED/"],
      ["diff.evil.textconv", "sed s/o/TEXTCONV/"],
      ["diff.external", "echo EXTERNAL"],
      ["core.fsmonitor", `touch ${marker}`],
      // Not a program, but a way out: the working tree would be /etc.
      ["core.worktree", "/etc"],
    ] as const) {
      git(dir, "config", key, value);
    }
    put(dir, "f.txt", "two\n");
    put(dir, "g.md", "two\n");
    const other = await tb.session({ root: dir, name: "hostile" });
    expect((await agentGet<Body>(`${other.r}/v?op=status`)).entries).toEqual([
      { path: "f.txt", state: "unstaged", change: "modified" },
      { path: "g.md", state: "unstaged", change: "modified" },
    ]);
    expect((await agentGet<Body>(`${other.r}/v?op=diff&path=g.md`)).patch).toContain("-one\n+two");
    const patch = (await agentGet<Body>(`${other.r}/v?op=diff&path=f.txt`)).patch as string;
    expect(patch).toContain("-one\n+two");
    expect(patch).not.toMatch(/FILTERED|TEXTCONV|EXTERNAL/);
    expect((await agentGet<Body>(`${other.r}/v?op=diff&rev=HEAD&path=f.txt`)).patch).toContain("+two");
    expect((await agentGet<Body>(`${other.r}/v?op=show&path=f.txt`)).text).toBe("one\n");
    expect(fs.existsSync(marker)).toBe(false);
  });
});
