// Words for the MCP transport (issue 26 item 7): over MCP, answers name tools and fields, never URLs, route letters
// or URL parameters. A realistic workload of successes and failures through the official client, each answer's
// text and structuredContent scanned; the repairs that matter name the MCP call that fixes them.
import fs from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { InMemoryTransport } from "@modelcontextprotocol/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createActivityRecorder } from "../../../server/edge/activity-recorder.js";
import { createAuthenticator } from "../../../server/gateway/authenticate.js";
import { SessionStates } from "../../../server/kernel/tool/session-state.js";
import { createLogger } from "../../../server/log.js";
import { createMcpServer, type McpDeps } from "../../../server/mcp/server.js";
import { createPluginHost } from "../../../server/plugins/host.js";
import { giveToAgent, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";

type Result = Awaited<ReturnType<Client["callTool"]>>;

let tb: TestBridge;
let full: AgentSession;
let client: Client;

/** URL-edge words an MCP answer must not carry: the capability path, the bridge's origin, route letters, raw `~q`, "fetch ...". */
const URL_EDGE = [
  /\/v0\//,
  /https?:\/\/127\.0\.0\.1/,
  /~q\b/,
  /(^|[\s(`"'])\/[a-z](\?|[\s.,;)]|$)/,
  /\bfetch(ing)? (retry|read|repair|it|each|the|poll|this)\b/i,
  /\bthis URL\b/i,
];

function put(name: string, content: string): void {
  const file = path.join(tb.projectDir, name);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content);
  giveToAgent(file, false);
}

function textOf(result: Result): string {
  return (result.content as Array<{ type: string; text?: string }>)
    .filter((c) => c.type === "text")
    .map((c) => c.text)
    .join("\n");
}

beforeAll(async () => {
  tb = await startTestBridge();
  full = await tb.session({ write: true, terminal: true });
  const deps: McpDeps = {
    kernel: tb.bridge.kernel,
    tools: tb.bridge.tools,
    plugins: createPluginHost([]),
    states: new SessionStates(),
    publicOrigin: () => tb.bridge.dataUrl,
    log: createLogger("silent"),
    signal: new AbortController().signal,
    record: createActivityRecorder(tb.bridge.store.activity),
  };
  const scope = createAuthenticator(tb.bridge.store)(full.m!.split("/").pop()!)!;
  const server = createMcpServer(deps, scope);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  client = new Client({ name: "wording-test", version: "1.0.0" });
  await client.connect(clientSide);
  put("notes.txt", "alpha\nbeta\ngamma\nbeta\n");
  put("big.txt", Array.from({ length: 600 }, (_, i) => `line ${i + 1}\n`).join(""));
  put("src/app.ts", 'export const greeting = "hi";\n');
  put("package.json", JSON.stringify({ name: "demo", scripts: { test: "echo ok" } }));
});
afterAll(async () => {
  await client?.close();
  await tb.close();
});

/** Each call of the workload: [what it shows, tool, arguments]. */
const WORKLOAD: Array<[string, string, Record<string, unknown>]> = [
  ["a page of a long file", "read", { path: "big.txt" }],
  ["a directory", "read", { path: "src" }],
  ["a missing file", "read", { path: "missing.txt" }],
  ["a path outside the project", "read", { path: "../outside.txt" }],
  ["a line range past the end", "read", { path: "notes.txt", offset: 99 }],
  ["an outline of a language it does not parse", "outline", { path: "notes.txt" }],
  ["the project", "project", {}],
  ["a glob that finds nothing", "glob", { pattern: "*.nothing" }],
  ["a grep with a bad regex", "grep", { pattern: "(" }],
  ["a literal grep that matches nothing", "grep", { pattern: "a.b(", literal: true }],
  ["a grep stopped at its limit", "grep", { pattern: "a", limit: 1 }],
  ["a glob stopped at its limit", "glob", { pattern: "*", limit: 1 }],
  ["an edit whose oldString is missing", "edit", { path: "notes.txt", oldString: "delta", newString: "x" }],
  ["an edit whose oldString is close", "edit", { path: "notes.txt", oldString: "gamm\n", newString: "x\n" }],
  ["an ambiguous edit", "edit", { path: "notes.txt", oldString: "beta", newString: "BETA" }],
  ["an edit that changes nothing", "edit", { path: "notes.txt", oldString: "alpha", newString: "alpha" }],
  ["a write over a file read in part", "write", { path: "big.txt", content: "new\n" }],
  [
    "a patch whose hunk is not there",
    "patch",
    { patchText: "*** Begin Patch\n*** Update File: notes.txt\n@@\n-omega\n+OMEGA\n*** End Patch" },
  ],
  [
    "a patch with a line missing its prefix",
    "patch",
    { patchText: "*** Begin Patch\n*** Update File: notes.txt\n@@\n alpha\nbeta\n*** End Patch" },
  ],
  [
    "a patch that adds an existing file",
    "patch",
    { patchText: "*** Begin Patch\n*** Add File: notes.txt\n+x\n*** End Patch" },
  ],
  ["a shell command", "shell", { command: "echo hi; echo err >&2; exit 3" }],
  ["a shell command past its timeout", "shell", { command: "sleep 5", timeout: 200 }],
  ["a background process", "shell", { command: "sleep 30", background: true }],
  ["stopping a process that is not there", "shell_stop", { pid: 999999 }],
  ["a result of an unknown call", "mutation_result", { callId: "no-such-call", wait: 0 }],
];

describe("MCP answers are worded for MCP", () => {
  it.each(WORKLOAD)("%s names no URL, route letter or URL step", async (_what, name, args) => {
    const result = await client.callTool({ name, arguments: args });
    const words = `${textOf(result)}\n${JSON.stringify(result.structuredContent ?? {})}`;
    for (const pattern of URL_EDGE) expect(words, `${pattern}`).not.toMatch(pattern);
    expect(words).not.toContain("(a URL step");
  });

  it("says replaceAll when an edit's oldString occurs more than once", async () => {
    const result = await client.callTool({
      name: "edit",
      arguments: { path: "notes.txt", oldString: "beta", newString: "BETA" },
    });
    const body = result.structuredContent as Record<string, unknown>;
    expect(body).toMatchObject({ ok: false, errorCode: "edit_ambiguous" });
    expect(String(body.repairHint)).toContain("replaceAll: true");
    expect(String(body.repairHint)).toContain("lines 2, 4");
    expect(textOf(result)).toContain("replaceAll");
  });

  it("points a stale write at the read call that shows the file, and a missing path at glob", async () => {
    const stale = (await client.callTool({ name: "write", arguments: { path: "big.txt", content: "new\n" } }))
      .structuredContent as Record<string, unknown>;
    expect(stale).toMatchObject({ ok: false, errorCode: "stale_read" });
    expect(String(stale.repairHint)).toContain('read {"path":"/project/big.txt"}');
    expect(stale).not.toHaveProperty("retry");
    const missing = (await client.callTool({ name: "read", arguments: { path: "docs/missing.md" } }))
      .structuredContent as Record<string, unknown>;
    expect(String(missing.repairHint)).toMatch(/glob .*"pattern":"\*\*\/missing\.md"/);
  });

  it("gives a page's continuation and a background process's stop as tool calls", async () => {
    const page = (await client.callTool({ name: "read", arguments: { path: "big.txt" } })).structuredContent as Record<
      string,
      unknown
    >;
    expect(page.next).toMatchObject({ tool: "read", arguments: { path: "big.txt" } });
    const started = (await client.callTool({ name: "shell", arguments: { command: "sleep 30", background: true } }))
      .structuredContent as Record<string, unknown>;
    expect(started).toMatchObject({ ok: true, mode: "background" });
    expect(started.stop).toBe(`shell_stop {"pid":${String(started.pid)}}`);
    await client.callTool({ name: "shell_stop", arguments: { pid: started.pid } });
  });

  it("words a call that is still running: poll and hint name mutation_result", async () => {
    const key = "wording-running-1";
    const running = client.callTool({
      name: "shell",
      arguments: { command: "sleep 2; echo done" },
      _meta: { "urlbridge/idempotencyKey": key },
    });
    let polled: Record<string, unknown> = {};
    for (let i = 0; i < 40 && polled.state !== "running"; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      const result = await client.callTool({ name: "mutation_result", arguments: { callId: key, wait: 0 } });
      polled = result.structuredContent as Record<string, unknown>;
      const words = `${textOf(result)}\n${JSON.stringify(polled)}`;
      for (const pattern of URL_EDGE) expect(words, `${pattern}`).not.toMatch(pattern);
    }
    expect(polled).toMatchObject({
      ok: true,
      state: "running",
      callId: key,
      poll: `mutation_result {"callId":"${key}"}`,
    });
    expect(String(polled.hint)).toContain(`call mutation_result {"callId":"${key}"}`);
    expect((await running).structuredContent).toMatchObject({ ok: true, stdout: "done\n" });
  });

  it("never rewords content: a command that prints a bridge URL and URL words gets them back byte for byte", async () => {
    const printed = `${full.m}/r?path=notes.txt`;
    const result = await client.callTool({
      name: "shell",
      arguments: { command: `printf '%s' '${printed}'; echo ' fetch retry' >&2` },
    });
    expect(result.structuredContent).toMatchObject({ ok: true, stdout: printed, stderr: " fetch retry\n" });
  });

  it("gives the project's test commands as shell calls", async () => {
    const project = (await client.callTool({ name: "project", arguments: {} })).structuredContent as Record<
      string,
      unknown
    >;
    const tests = project.testCommands as Array<{ command: string; run?: string }>;
    expect(tests.length).toBeGreaterThan(0);
    for (const t of tests) expect(t.run).toBe(`shell ${JSON.stringify({ command: t.command })}`);
    expect(project.notice).toBe(
      "Executables are looked up on the bridge's PATH, which shell commands use; none was run.",
    );
  });
});
