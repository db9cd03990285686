// Issue 26 Build 3: nothing urlbridge answers over MCP fails its own published outputSchema. Through the real HTTP
// endpoint with the official v2 client, every MCP tool's answer kinds (ok, running, joined, replayed, and the
// failures the tools really produce) are validated with ajv against the outputSchema tools/list published, and
// every error code of the catalog (server/errors.ts) is checked against every tool's failure branch, so a new code
// cannot be forgotten. The foreground bound is shortened (mcpCallBoundMs) and the file mutations slowed by the
// journal's test hooks, so edit, write and patch reach `running` too.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import type { ValidateFunction } from "ajv";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ERROR_CATALOG, ErrorCode } from "../../../server/errors.js";
import { PATCH_WRITE_DELAY_ENV, RENAME_DELAY_ENV } from "../../../server/mutation/journal/test-hooks.js";
import { giveToAgent, makeTempDir, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";
import { makeRepository } from "../../helpers/git-repo.js";
import { connectMcpClient, tokenOfBase, type McpTestClient } from "../../helpers/mcp-clients.js";

const BOUND_MS = 1500;
/** Longer than the bound, so a slowed edit, write or patch answers running first. */
const SLOW_MS = 2500;
const MAX_FOLLOW_UPS = 8;

type Kind = "ok" | "running" | "joined" | "replayed" | `error:${string}`;
type CallResult = Awaited<ReturnType<McpTestClient["callTool"]>>;
type Body = Record<string, unknown>;

/** Each answer seen: which tool, which kind; the coverage assertions read it. */
const seen = new Map<string, Set<Kind>>();
const validators = new Map<string, ValidateFunction>();

let fast: TestBridge;
let slow: TestBridge;
let full: AgentSession;
let web: AgentSession;
let slowFull: AgentSession;
const clients: McpTestClient[] = [];

const ajv = new Ajv2020({ strict: false, allErrors: true });

/** The kinds one answer is: its outcome (ok, running, error:<code>) and how the journal answered it (joined, replayed). */
function kindsOf(body: Body): Kind[] {
  const outcome: Kind =
    body.ok === false
      ? `error:${String(body.errorCode)}`
      : body.state === "pending" || body.state === "running"
        ? "running"
        : "ok";
  return body.dedupe === "replayed" || body.dedupe === "joined" ? [outcome, body.dedupe] : [outcome];
}

/** Validates one answer against its tool's published outputSchema and records its kind. */
function check(tool: string, result: CallResult): Body {
  const body = result.structuredContent as Body;
  expect(body, `${tool}: structuredContent`).toBeDefined();
  const validate = validators.get(tool)!;
  expect(validate(body), `${tool} ${JSON.stringify(body).slice(0, 300)}: ${ajv.errorsText(validate.errors)}`).toBe(
    true,
  );
  expect(Boolean(result.isError), `${tool}: isError matches ok`).toBe(body.ok === false);
  if (!seen.has(tool)) seen.set(tool, new Set());
  for (const kind of kindsOf(body)) seen.get(tool)!.add(kind);
  return body;
}

async function connect(on: TestBridge, base: string | undefined): Promise<McpTestClient> {
  const client = await connectMcpClient(on.bridge.dataUrl, tokenOfBase(base!), { sdk: "v2" });
  clients.push(client);
  const { tools } = await client.listTools();
  for (const tool of tools)
    if (!validators.has(tool.name)) validators.set(tool.name, ajv.compile(tool.outputSchema as object));
  return client;
}

async function call(client: McpTestClient, name: string, args: Record<string, unknown>, key?: string): Promise<Body> {
  return check(
    name,
    await client.callTool({ name, arguments: args, ...(key ? { _meta: { "urlbridge/idempotencyKey": key } } : {}) }),
  );
}

/** Follows `next` until the intent finishes; every answer on the way is checked too. */
async function follow(client: McpTestClient, body: Body): Promise<Body> {
  let last = body;
  for (let i = 0; last.state === "pending" || last.state === "running"; i++) {
    expect(i).toBeLessThan(MAX_FOLLOW_UPS);
    const next = last.next as { tool: string; arguments: Record<string, unknown> };
    last = await call(client, next.tool, next.arguments);
  }
  return last;
}

function put(on: TestBridge, name: string, content: string | Buffer): void {
  const file = path.join(on.projectDir, name);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content);
  giveToAgent(file, false);
}

beforeAll(async () => {
  fast = await startTestBridge({}, { mcpCallBoundMs: BOUND_MS });
  full = await fast.session({ write: true, terminal: true });
  web = await fast.session({ write: false, web: true });
  process.env[PATCH_WRITE_DELAY_ENV] = String(SLOW_MS);
  process.env[RENAME_DELAY_ENV] = String(SLOW_MS);
  try {
    slow = await startTestBridge({}, { mcpCallBoundMs: BOUND_MS });
  } finally {
    delete process.env[PATCH_WRITE_DELAY_ENV];
    delete process.env[RENAME_DELAY_ENV];
  }
  slowFull = await slow.session({ write: true, terminal: true });
});

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => {});
  await Promise.all([fast?.close(), slow?.close()]);
});

describe("every MCP answer validates against the outputSchema tools/list publishes", () => {
  it("read, search and web tools: successes and failures", async () => {
    put(fast, "notes.txt", "alpha\nbeta\ngamma\n");
    put(fast, "src/code.ts", "export function f(): number {\n  return 1;\n}\n");
    // A 1x1 PNG: read answers it as an image.
    put(
      fast,
      "dot.png",
      Buffer.from(
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==",
        "base64",
      ),
    );
    put(fast, "bin.dat", Buffer.from([0, 1, 2, 3, 0, 255, 254]));
    const client = await connect(fast, full.m);
    await call(client, "read", { path: "notes.txt" });
    await call(client, "read", { path: "notes.txt", offset: 2, limit: 1 });
    await call(client, "read", { path: "dot.png" });
    await call(client, "read", { path: "missing.txt" });
    await call(client, "read", { path: "../outside.txt" });
    await call(client, "read", { path: "src" });
    await call(client, "read", { path: "bin.dat" });
    await call(client, "outline", { path: "src/code.ts" });
    await call(client, "outline", { path: "missing.ts" });
    await call(client, "stat", { path: "notes.txt" });
    await call(client, "stat", { path: "src" });
    await call(client, "stat", { path: "missing.txt" });
    await call(client, "stat", { path: "../outside.txt" });
    await call(client, "project", {});
    await call(client, "glob", { pattern: "**/*.ts" });
    await call(client, "glob", { pattern: "*.txt", path: "missing-folder" });
    await call(client, "grep", { pattern: "alpha" });
    await call(client, "grep", { pattern: "(unclosed" });
    await call(client, "grep", { pattern: "x", path: "missing-folder" });
    // git: this project is no repository (a failure); a small one made here answers every op.
    await call(client, "git", { op: "status" });
    const repo = makeTempDir("mcp-git");
    const git = (...args: string[]) =>
      execFileSync("git", ["-c", "user.name=T", "-c", "user.email=t@example.com", ...args], { cwd: repo });
    git("init", "-q", "-b", "main");
    fs.writeFileSync(path.join(repo, "f.txt"), "one\n");
    git("add", ".");
    git("commit", "-q", "-m", "first");
    fs.writeFileSync(path.join(repo, "f.txt"), "two\n");
    const repoClient = await connect(fast, (await fast.session({ root: repo, name: "git-repo" })).r);
    for (const args of [{ op: "status" }, { op: "diff" }, { op: "diff", path: "f.txt" }, { op: "log" }, { op: "refs" }])
      await call(repoClient, "git", args);
    await call(repoClient, "git", { op: "show", path: "f.txt" });
    await call(repoClient, "git", { op: "show", path: "f.txt", rev: "nosuch" });

    const webClient = await connect(fast, web.r);
    await call(webClient, "webfetch", { url: "http://127.0.0.1:1/" });
    await call(webClient, "websearch", { query: "urlbridge" });
  });

  it("file mutations: ok, failures, replayed, and running then next while a write is slow", async () => {
    put(fast, "edit-me.txt", "one\ntwo\nthree\n");
    const client = await connect(fast, full.m);
    await call(client, "read", { path: "edit-me.txt" });
    await call(client, "edit", { path: "edit-me.txt", oldString: "two", newString: "TWO" });
    await call(client, "edit", { path: "edit-me.txt", oldString: "absent", newString: "x" });
    await call(client, "edit", { path: "edit-me.txt", oldString: "e", newString: "E" });
    await call(client, "edit", { path: "missing.txt", oldString: "a", newString: "b" });
    await call(client, "write", { path: "new-file.txt", content: "fresh\n" });
    await call(client, "write", { path: "edit-me.txt", content: "replaced unseen\n" });
    await call(client, "write", { path: "../outside.txt", content: "x" });
    await call(client, "patch", { patchText: "*** Begin Patch\n*** Add File: added.txt\n+a\n*** End Patch" });
    await call(client, "patch", { patchText: "not a patch" });
    await call(client, "patch", {
      patchText: "*** Begin Patch\n*** Update File: missing.txt\n@@\n-a\n+b\n*** End Patch",
    });
    // Replays: the same key answers the recorded result, ok or failed.
    for (const [i, [tool, args]] of (
      [
        ["edit", { path: "edit-me.txt", oldString: "three", newString: "3" }],
        ["write", { path: "keyed.txt", content: "k\n" }],
        ["patch", { patchText: "*** Begin Patch\n*** Add File: keyed-added.txt\n+a\n*** End Patch" }],
        ["edit", { path: "edit-me.txt", oldString: "nowhere", newString: "x" }],
      ] as const
    ).entries()) {
      const key = `replay-${i}-${tool}`;
      await call(client, tool, args, key);
      const again = await call(client, tool, args, key);
      expect(again.dedupe, `${tool} ${JSON.stringify(again).slice(0, 400)}`).toBe("replayed");
    }

    put(slow, "slow.txt", "a\nb\n");
    const slowClient = await connect(slow, slowFull.m);
    await call(slowClient, "read", { path: "slow.txt" });
    for (const [tool, args] of [
      ["edit", { path: "slow.txt", oldString: "b", newString: "B" }],
      ["write", { path: "slow-new.txt", content: "n\n" }],
      ["patch", { patchText: "*** Begin Patch\n*** Add File: slow-added.txt\n+a\n*** End Patch" }],
    ] as const) {
      const key = `slow-${tool}`;
      // Two identical keyed calls at once: one runs, the other joins it; both answer running at the bound.
      const [a, b] = await Promise.all([call(slowClient, tool, args, key), call(slowClient, tool, args, key)]);
      expect([a.state, b.state]).toEqual(["running", "running"]);
      expect([a.dedupe, b.dedupe].filter(Boolean)).toEqual(["joined"]);
      expect(await follow(slowClient, a)).toMatchObject({
        ok: true,
        state: "succeeded",
        tool: tool === "patch" ? "apply_patch" : tool,
      });
    }
    expect(fs.readFileSync(path.join(slow.projectDir, "slow.txt"), "utf8")).toBe("a\nB\n");
  });

  it("shell and mutation_result: ok, running, joined, replayed, failures", async () => {
    const client = await connect(fast, full.m);
    await call(client, "shell", { command: "echo hi" });
    await call(client, "shell", { command: "exit 3" });
    await call(client, "shell", { command: "sleep 1", background: true, timeout: 1000 });
    await call(client, "shell", { command: "echo x", workdir: "no-such-dir" });
    const [a, b] = await Promise.all([
      call(client, "shell", { command: "sleep 2; echo long" }, "shell-long"),
      call(client, "shell", { command: "sleep 2; echo long" }, "shell-long"),
    ]);
    expect([a.dedupe, b.dedupe].filter(Boolean)).toEqual(["joined"]);
    expect(await follow(client, a)).toMatchObject({ ok: true, state: "succeeded", stdout: "long\n", exitCode: 0 });
    expect((await call(client, "shell", { command: "sleep 2; echo long" }, "shell-long")).dedupe).toBe("replayed");
    await call(client, "mutation_result", { callId: "shell-long" });
    await call(client, "mutation_result", { callId: "no-such-call" });
    // A failed intent polls as ok:false with its recorded failure.
    await call(client, "edit", { path: "notes.txt", oldString: "absent-text", newString: "x" }, "failed-edit");
    await call(client, "mutation_result", { callId: "failed-edit" });

    // Its start-up window (3 s) outlasts the shortened bound: running first, then next answers the start.
    const bg = await follow(
      client,
      await call(client, "shell", { command: "echo started; sleep 30", background: true }),
    );
    expect(bg).toMatchObject({ ok: true, mode: "background" });
    await call(client, "shell_output", { logFile: String(bg.logFile) });
    await call(client, "shell_output", { logFile: "/no/such/log" });
    await call(client, "shell_stop", { pid: Number(bg.pid) });
    await call(client, "shell_stop", { pid: 999_999 });

    // An interactive process: its start, input, screen, raw page, the list, a failing input, its stop.
    const pty = await follow(client, await call(client, "shell", { command: "cat", interactive: true }));
    expect(pty).toMatchObject({ ok: true, mode: "pty" });
    const pid = Number(pty.pid);
    await call(client, "shell_input", { pid, text: "typed", keys: ["enter"], expect: "typed" });
    await call(client, "shell_input", { pid, keys: ["no-such-key"] });
    await call(client, "shell_output", { pid });
    await call(client, "shell_output", { pid, offset: 0 });
    await call(client, "shell_output", {});
    await call(client, "shell_stop", { pid });
    await call(client, "shell_input", { pid: 999_999, keys: ["enter"] });
  });

  it("changes and revert: ok and failures", async () => {
    const client = await connect(fast, full.m);
    const made = await call(client, "write", { filePath: "review-made.txt", content: "made\n" });
    await call(client, "changes", {});
    await call(client, "changes", { callId: String(made.callId) });
    await call(client, "changes", { callId: "no-such-call" });
    await call(client, "revert", { callId: String(made.callId) });
    await call(client, "revert", { callId: "no-such-call" });
  });

  it("git_commit: ok, replayed and failures", async () => {
    const repo = makeRepository();
    const project = await fast.api<{ id: string }>("POST", "/api/projects", {
      name: "commits",
      root: repo,
      permissions: { write: true, terminal: false },
    });
    const session = await fast.api<{ initUrl: string }>("POST", "/api/sessions", {
      projectId: project.body.id,
      name: "committer",
      worktree: {},
    });
    const bases = ((await (await fetch(session.body.initUrl)).json()) as { bases: { m: string } }).bases;
    const client = await connect(fast, bases.m);
    await call(client, "write", { filePath: "committed.txt", content: "committed\n" });
    await call(client, "git_commit", { message: "one file" }, "commit-once");
    await call(client, "git_commit", { message: "one file" }, "commit-once");
    await call(client, "git_commit", { message: "nothing left" });
  });

  it("covers every listed tool's success and failure, and every journaled tool's running, joined and replayed", () => {
    const listed = [...validators.keys()];
    expect(listed).toEqual(
      expect.arrayContaining([
        "read",
        "outline",
        "stat",
        "project",
        "glob",
        "grep",
        "git",
        "git_commit",
        "webfetch",
        "websearch",
        "edit",
        "write",
        "patch",
        "shell",
        "shell_output",
        "shell_stop",
        "shell_input",
        "mutation_result",
        "changes",
        "revert",
      ]),
    );
    // No success is reachable without a public web server or a configured search provider here.
    const noSuccess = new Set(["webfetch", "websearch"]);
    // project has no failing input; shell_output is `tail` as a foreground command: a missing log is its exit code 1, an ok answer.
    const noFailure = new Set(["project", "shell_output"]);
    for (const tool of listed) {
      const kinds = [...(seen.get(tool) ?? [])];
      if (!noSuccess.has(tool)) expect(kinds, `${tool} ok`).toContain("ok");
      if (!noFailure.has(tool))
        expect(
          kinds.some((k) => k.startsWith("error:")),
          `${tool} failure: ${kinds.join(", ")}`,
        ).toBe(true);
    }
    for (const tool of ["edit", "write", "patch", "shell"]) {
      for (const kind of ["running", "joined", "replayed"] as const)
        expect([...seen.get(tool)!], `${tool} ${kind}`).toContain(kind);
    }
    expect([...seen.get("mutation_result")!]).toEqual(expect.arrayContaining(["ok", "running"]));
  });

  it("accepts every error code of the catalog in every tool's failure branch, plain and as a journaled failure", () => {
    const codes = Object.values(ErrorCode);
    expect(codes.length).toBe(Object.keys(ERROR_CATALOG).length);
    for (const [tool, validate] of validators) {
      for (const code of codes) {
        const plain = {
          ok: false,
          errorCode: code,
          repairHint: "what to do next",
          retryable: ERROR_CATALOG[code].retryable,
          agentAction: "correct_request",
        };
        expect(validate(plain), `${tool} ${code}: ${ajv.errorsText(validate.errors)}`).toBe(true);
        const journaled = { ...plain, callId: "mcp-abc", state: "failed" };
        expect(validate(journaled), `${tool} ${code} (journaled): ${ajv.errorsText(validate.errors)}`).toBe(true);
      }
    }
  });
});
