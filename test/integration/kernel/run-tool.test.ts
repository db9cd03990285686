// Every native tool called two ways on one real bridge: through the kernel (bridge.kernel.run, no HTTP, input as a
// non-URL caller sends it) in one project, and through its URL route in an identical twin project. Same answers.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AnyToolDefinition, ToolContext } from "../../../server/kernel/tool/definition.js";
import { SessionState } from "../../../server/kernel/tool/session-state.js";
import { wireOutputOf } from "../../../server/mutation/journal/envelope.js";
import { buildUrl } from "../../../server/url-grammar/request-url.js";
import {
  agentGet,
  giveToAgent,
  makeTempDir,
  startTestBridge,
  type AgentSession,
  type TestBridge,
} from "../../helpers/bridge.js";
import { patchText } from "../mutation/fixtures.js";
import { url, writeTree, type Params } from "./fixtures.js";

type Body = Record<string, unknown> & { ok: boolean; errorCode?: string; callId?: string; dedupe?: string };

const TREE = {
  "src/a.ts": "export function hello() {\n  return 'hello';\n}\n",
  "src/b.txt": "one\ntwo\nthree\n",
  "notes/readme.md": "# Notes\n\nhello again\n",
};

interface Case {
  name: string;
  tool: string;
  /** Candidate input as a test or MCP sends it; the URL side spells the same values as query parameters. */
  input: (previous: Map<string, Body>) => Record<string, unknown>;
}

// One session's worth of calls, in order: later cases depend on earlier ones (read coverage before /w and /e,
// the staged blob before /b and the blob write, the first write's call id before /j).
const CASES: Case[] = [
  { name: "project", tool: "project", input: () => ({}) },
  { name: "stat", tool: "stat", input: () => ({ path: "src/a.ts" }) },
  // read takes a list of paths (path=a&path=b on a URL).
  { name: "read", tool: "read", input: () => ({ path: ["src/a.ts"] }) },
  { name: "read a window (numbers)", tool: "read", input: () => ({ path: ["src/b.txt"], offset: 2, limit: 1 }) },
  { name: "read the rest", tool: "read", input: () => ({ path: ["src/b.txt"] }) },
  { name: "read two files", tool: "read", input: () => ({ path: ["src/a.ts", "notes/readme.md"] }) },
  { name: "read a folder", tool: "read", input: () => ({ path: ["src"] }) },
  { name: "find", tool: "find", input: () => ({ name: "a" }) },
  { name: "find (booleans)", tool: "find", input: () => ({ name: "README", ignoreCase: true, recursive: true }) },
  { name: "grep (raw field)", tool: "grep", input: () => ({ pattern: "hello", path: "src" }) },
  {
    name: "grep (regex, ignoreCase)",
    tool: "grep",
    input: () => ({ pattern: "HEL+O", regex: true, ignoreCase: true }),
  },
  { name: "outline", tool: "outline", input: () => ({ path: "src/a.ts" }) },
  // The twins are no repositories (equal commit hashes would need equal dates): both answer not_a_repository.
  { name: "git status (not a repository)", tool: "git", input: () => ({ op: "status" }) },
  {
    name: "git diff (not a repository)",
    tool: "git",
    input: () => ({ op: "diff", staged: true, rev: "HEAD^", path: "src" }),
  },
  // The twins' sessions have no worktree of their own: git_commit refuses alike (journaled, so its intent too).
  { name: "git_commit (not a worktree session)", tool: "git_commit", input: () => ({ message: "Nothing to see" }) },
  { name: "write", tool: "write", input: () => ({ path: "src/new.txt", content: "a new file\n" }) },
  { name: "edit", tool: "edit", input: () => ({ path: "src/a.ts", old: "'hello'", new: "'hello world'" }) },
  {
    name: "apply_patch",
    tool: "apply_patch",
    input: () => ({ patch: patchText("*** Update File: src/b.txt", "@@", "-two", "+deux") }),
  },
  { name: "terminal", tool: "terminal", input: () => ({ command: "cat src/b.txt" }) },
  // Interactive processes: the list (none yet), and input to a pid this bridge never started.
  { name: "terminal view (list)", tool: "terminal_view", input: () => ({}) },
  { name: "input to an unknown pty", tool: "terminal_input", input: () => ({ pid: 999999, key: "enter" }) },
  { name: "stage", tool: "stage", input: () => ({ blob: "chunked", i: 0, count: 1, chunk: "staged text\n" }) },
  { name: "blob status", tool: "blob_status", input: () => ({ blob: "chunked" }) },
  {
    name: "write from a staged blob",
    tool: "write",
    input: () => ({ path: "src/staged.txt", blob: "chunked", count: 1 }),
  },
  { name: "poll the first write", tool: "result", input: (previous) => ({ call: previous.get("write")!.callId }) },
  { name: "replay the first write", tool: "write", input: () => ({ path: "src/new.txt", content: "a new file\n" }) },
  { name: "changes", tool: "changes", input: () => ({}) },
  { name: "diff of the edit", tool: "changes", input: (previous) => ({ intent: previous.get("edit")!.callId }) },
  { name: "revert the first write", tool: "revert", input: (previous) => ({ intent: previous.get("write")!.callId }) },
  // Failures answer alike too: a tool error, a validation error, a journal refusal.
  { name: "read of a missing file", tool: "read", input: () => ({ path: ["nope.txt"] }) },
  { name: "a boolean that is not one", tool: "grep", input: () => ({ pattern: "x", regex: "maybe" }) },
  {
    name: "journal refusal (run and call)",
    tool: "write",
    input: () => ({ path: "src/x.txt", content: "x", run: "a", call: "b" }),
  },
  // The web tools (web permission on), without network: the guard's refusal and a search with no provider key.
  {
    name: "webfetch of the metadata service",
    tool: "webfetch",
    input: () => ({ url: "http://169.254.169.254/latest/meta-data/", format: "text" }),
  },
  { name: "websearch without a provider", tool: "websearch", input: () => ({ query: "vitest", limit: 3 }) },
];

/** The URL spelling of candidate input: values as query parameters, the tool's rawField as raw=. */
function urlOf(tool: AnyToolDefinition, session: AgentSession, input: Record<string, unknown>): string {
  const params: Params = [];
  let raw: string | undefined;
  for (const [key, value] of Object.entries(input)) {
    if (key === tool.url.rawField) raw = String(value);
    else if (Array.isArray(value)) for (const item of value) params.push([key, item as string]);
    else params.push([key, typeof value === "boolean" ? (value ? "1" : "0") : (value as string | number)]);
  }
  return url(tool.capability === "read" ? session.r : session.m!, tool.route, params, raw);
}

/**
 * What must differ between the two sides, and nothing else: each side's base URLs, project root and name, and
 * clock readings (timings, mtimes). A repair URL exists only on the URL transport; failures are compared without
 * it and its agentAction (fetch_repair there, correct_request off the URL) where the test says so.
 */
function normalise(body: unknown, session: AgentSession, root: string, name: string): unknown {
  const text = JSON.stringify(body)
    .split(session.r)
    .join("{r}")
    .split(session.m!)
    .join("{m}")
    .split(root)
    .join("{root}")
    .split(JSON.stringify(name).slice(1, -1))
    .join("{name}");
  return JSON.parse(text, (key, value) =>
    /(^|[a-z])(ms|Ms|At|mtime|Mtime)$|duration|elapsed|^modified$/.test(key) &&
    (typeof value === "number" || typeof value === "string")
      ? "{clock}"
      : value,
  );
}

describe("the tool kernel: every native tool through run() answers as its URL route does", () => {
  let t: TestBridge;
  let viaUrl: AgentSession;
  let viaKernel: AgentSession;
  let kernelRoot: string;
  let ctx: ToolContext;
  const tools = new Map<string, AnyToolDefinition>();

  /** A ToolContext as a non-URL transport builds one: the session's scope from the store, no repair URLs. */
  function contextFor(session: AgentSession): ToolContext {
    const token = session.r.slice(session.r.lastIndexOf("/") + 1);
    const cap = t.bridge.store.sessions.lookup(token)!;
    const caps = t.bridge.store.sessions.capabilitiesFor(cap.sessionId, cap.generation);
    const origin = new URL(session.r).origin;
    const { agentFallback } = t.bridge.config;
    return {
      project: {
        id: cap.projectId,
        name: cap.projectName,
        root: cap.root,
        permissions: cap.permissions,
        ...(agentFallback ? { agentFallback } : {}),
      },
      session: { id: cap.sessionId, name: cap.sessionName, generation: cap.generation },
      state: new SessionState(),
      urls: {
        to: (base, route, params, raw) =>
          buildUrl(origin, `/v0/${base === "r" ? caps.read : caps.mutation}`, route, params, raw),
        repair: () => undefined,
      },
      signal: new AbortController().signal,
    };
  }

  beforeAll(async () => {
    t = await startTestBridge();
    for (const tool of t.bridge.tools) tools.set(tool.id, tool);
    writeTree(t.projectDir, TREE);
    kernelRoot = makeTempDir("kernel-project");
    writeTree(kernelRoot, TREE);
    giveToAgent(kernelRoot);
    viaUrl = await t.session({ write: true, terminal: true, web: true, name: "twin-url" });
    viaKernel = await t.session({ write: true, terminal: true, web: true, name: "twin-kernel", root: kernelRoot });
    ctx = contextFor(viaKernel);
  });
  afterAll(async () => t.close());

  it("covers every native tool", () => {
    const native = [...tools.keys()].sort();
    expect([...new Set(CASES.map((c) => c.tool))].sort()).toEqual(native);
  });

  it("answers each call the same way, and every success parses with the tool's declared output", async () => {
    const previousUrl = new Map<string, Body>();
    const previousKernel = new Map<string, Body>();
    for (const c of CASES) {
      const tool = tools.get(c.tool)!;
      const fromUrl = await agentGet<Body>(urlOf(tool, viaUrl, c.input(previousUrl)));
      const fromKernel = (await t.bridge.kernel.run(tool, c.input(previousKernel), ctx)).body as Body;
      previousUrl.set(c.name, fromUrl);
      previousKernel.set(c.name, fromKernel);
      const a = normalise(fromUrl, viaUrl, t.projectDir, "twin-url") as Body;
      const b = normalise(fromKernel, viaKernel, kernelRoot, "twin-kernel") as Body;
      if (!a.ok) {
        // Only the URL transport has a request to correct.
        delete a.repair;
        delete b.repair;
        if (a.agentAction === "fetch_repair") a.agentAction = b.agentAction;
      }
      expect({ case: c.name, body: b }).toEqual({ case: c.name, body: a });
      // A journaled tool's answer is its output plus the journal's envelope (wireOutputOf); read tools and the
      // unrecorded helpers (stage, /b, /j) answer tool.output as is.
      const output = wireOutputOf(tool);
      if (fromKernel.ok && output) {
        const parsed = output.safeParse(fromKernel);
        expect({ case: c.name, issues: parsed.error?.issues }).toEqual({ case: c.name, issues: undefined });
      }
    }
    // Both sides failing alike would pass the comparison: only the cases meant to fail may.
    const failed = CASES.filter((c) => !previousKernel.get(c.name)!.ok).map((c) => c.name);
    expect(failed).toEqual([
      "git status (not a repository)",
      "git diff (not a repository)",
      "git_commit (not a worktree session)",
      "input to an unknown pty",
      "read of a missing file",
      "a boolean that is not one",
      "journal refusal (run and call)",
      "webfetch of the metadata service",
      "websearch without a provider",
    ]);
    expect(previousKernel.get("git diff (not a repository)")?.errorCode).toBe("not_a_repository");
    expect(previousKernel.get("git_commit (not a worktree session)")?.errorCode).toBe("not_a_worktree_session");
    expect(previousKernel.get("webfetch of the metadata service")?.errorCode).toBe("web_address_refused");
    expect(previousKernel.get("websearch without a provider")?.errorCode).toBe("web_search_not_configured");
    expect(fs.readFileSync(path.join(kernelRoot, "src/b.txt"), "utf8")).toBe("one\ndeux\nthree\n");
    expect(fs.readFileSync(path.join(kernelRoot, "src/staged.txt"), "utf8")).toBe("staged text\n");
    expect(previousKernel.get("replay the first write")?.dedupe).toBe("replayed");
  });
});

describe("the tool kernel without the gateway", () => {
  let t: TestBridge;
  let readOnly: AgentSession;
  let writable: AgentSession;
  const tool = (id: string) => t.bridge.tools.find((d) => d.id === id)!;

  function contextFor(session: AgentSession): ToolContext {
    const cap = t.bridge.store.sessions.lookup(session.r.slice(session.r.lastIndexOf("/") + 1))!;
    return {
      project: { id: cap.projectId, name: cap.projectName, root: cap.root, permissions: cap.permissions },
      session: { id: cap.sessionId, name: cap.sessionName, generation: cap.generation },
      state: new SessionState(),
      urls: { to: () => "", repair: () => undefined },
      signal: new AbortController().signal,
    };
  }

  beforeAll(async () => {
    t = await startTestBridge();
    writeTree(t.projectDir, { "a.txt": "alpha\n" });
    readOnly = await t.session({ name: "read-only" });
    writable = await t.session({ write: true, name: "writable" });
  });
  afterAll(async () => t.close());

  it.each([
    [
      "a number below its minimum",
      "read",
      { path: ["a.txt"], limit: 0 },
      [
        ["path", "a.txt"],
        ["limit", 0],
      ],
    ],
    ["a missing required parameter", "read", {}, []],
    [
      "a string where a number belongs",
      "read",
      { path: ["a.txt"], offset: "two" },
      [
        ["path", "a.txt"],
        ["offset", "two"],
      ],
    ],
    [
      "a value outside an enum-like flag",
      "find",
      { name: "a", recursive: "sometimes" },
      [
        ["name", "a"],
        ["recursive", "sometimes"],
      ],
    ],
    ["a missing raw field", "grep", { path: "." }, [["path", "."]]],
  ] as Array<[string, string, Record<string, unknown>, Params]>)(
    "refuses %s with the URL route's errorCode and message",
    async (_name, id, input, params) => {
      const fromKernel = (await t.bridge.kernel.run(tool(id), input, contextFor(readOnly))).body as Body;
      const fromUrl = await agentGet<Body>(url(readOnly.r, tool(id).route, params));
      expect(fromKernel.ok).toBe(false);
      expect({
        errorCode: fromKernel.errorCode,
        repairHint: fromKernel.repairHint,
        errorDetail: fromKernel.errorDetail,
      }).toEqual({
        errorCode: fromUrl.errorCode,
        repairHint: fromUrl.repairHint,
        errorDetail: fromUrl.errorDetail,
      });
    },
  );

  it("refuses a mutation when the project's permission is off, before validating or touching anything", async () => {
    const body = (
      await t.bridge.kernel.run(tool("write"), { path: "b.txt", content: "x", bogus: 1 }, contextFor(readOnly))
    ).body as Body;
    expect(body).toMatchObject({
      ok: false,
      errorCode: "tool_not_enabled",
      errorDetail: { tool: "write", permission: "write" },
    });
    expect(fs.existsSync(path.join(t.projectDir, "b.txt"))).toBe(false);
  });

  it("journals a mutation: the same input twice executes once and the second answer is the recorded one", async () => {
    const ctx = contextFor(writable);
    const input = { path: "journaled.txt", content: "first\n" };
    const first = (await t.bridge.kernel.run(tool("write"), input, ctx)).body as Body;
    expect(first).toMatchObject({ ok: true, state: "succeeded" });
    // Were the replay to execute, it would overwrite this.
    fs.writeFileSync(path.join(t.projectDir, "journaled.txt"), "changed by hand\n");
    const second = await t.bridge.kernel.run(tool("write"), { ...input }, ctx);
    expect(second).toMatchObject({ callId: first.callId, dedupe: "replayed" });
    expect(second.body).toMatchObject({ ok: true, callId: first.callId, dedupe: "replayed" });
    expect(fs.readFileSync(path.join(t.projectDir, "journaled.txt"), "utf8")).toBe("changed by hand\n");
  });

  it("answers a synchronous read tool synchronously", () => {
    // stat: read itself became async when large files started paging by range (issue 34).
    const outcome = t.bridge.kernel.run(tool("stat"), { path: "a.txt" }, contextFor(readOnly));
    expect(outcome).not.toBeInstanceOf(Promise);
    expect((outcome as { body: Body }).body).toMatchObject({ ok: true });
  });
});
