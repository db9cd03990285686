// The 2025-era HTTP leg's one-exchange transport (server/mcp/legacy-exchange.ts) against the SDK's own
// WebStandardStreamableHTTPServerTransport in stateless JSON mode, which it replaced: the same parsed bodies and
// headers through both, on fresh servers of a real bridge's kernel, answer the same status, content type and bytes.
// So does the direct tools/call path (server/mcp/http-direct-call.ts) for every call it admits, an answer that breaks
// its tool's outputSchema included; the rest it leaves to the exchange.
import { WebStandardStreamableHTTPServerTransport, type AuthInfo } from "@modelcontextprotocol/server";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createActivityRecorder } from "../../../server/edge/activity-recorder.js";
import { createAuthenticator } from "../../../server/gateway/authenticate.js";
import { SessionStates } from "../../../server/kernel/tool/session-state.js";
import { createLogger } from "../../../server/log.js";
import { DirectTools } from "../../../server/mcp/direct-call.js";
import { admitHttpCall } from "../../../server/mcp/http-direct-call.js";
import { exchangeLegacy } from "../../../server/mcp/legacy-exchange.js";
import { createMcpServer, type McpDeps, type McpScope } from "../../../server/mcp/server.js";
import { definePluginTool, type Plugin } from "../../../server/plugins/definition.js";
import { createPluginHost } from "../../../server/plugins/host.js";
import { startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";

const INIT = (version: string, id: number | string = 1) => ({
  jsonrpc: "2.0",
  id,
  method: "initialize",
  params: { protocolVersion: version, capabilities: {}, clientInfo: { name: "eq", version: "0" } },
});
const call = (id: number | string, name: string, args: Record<string, unknown>) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: args },
});

/** [name, parsed body, MCP-Protocol-Version header]. */
const CASES: Array<[string, unknown, string | undefined]> = [
  ["initialize (2025-06-18)", INIT("2025-06-18"), undefined],
  ["initialize (2024-11-05)", INIT("2024-11-05", "s"), undefined],
  ["initialize with an unknown version", INIT("1999-01-01"), undefined],
  ["ping", { jsonrpc: "2.0", id: 2, method: "ping" }, "2025-06-18"],
  ["tools/list", { jsonrpc: "2.0", id: 3, method: "tools/list", params: {} }, "2025-06-18"],
  ["tools/call read", call(4, "read", { path: "eq.txt" }), "2025-06-18"],
  ["tools/call read of a missing file (isError)", call(5, "read", { path: "missing.txt" }), "2025-06-18"],
  ["tools/call with a bad argument", call(6, "read", { path: 7 }), "2025-06-18"],
  ["tools/call of an unknown tool", call(7, "nope", {}), "2025-03-26"],
  ["an unknown method", { jsonrpc: "2.0", id: 8, method: "resources/list", params: {} }, "2025-06-18"],
  ["no protocol version header", { jsonrpc: "2.0", id: 9, method: "ping" }, undefined],
  ["an unsupported protocol version header", { jsonrpc: "2.0", id: 10, method: "ping" }, "1999-01-01"],
  ["a notification only", { jsonrpc: "2.0", method: "notifications/initialized" }, "2025-06-18"],
  ["a cancellation", { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 99 } }, "2025-06-18"],
  ["a response from the client", { jsonrpc: "2.0", id: 11, result: {} }, "2025-06-18"],
  [
    "a batch of two requests",
    [{ jsonrpc: "2.0", id: 12, method: "ping" }, call(13, "read", { path: "eq.txt" })],
    "2025-06-18",
  ],
  [
    "a batch with a notification",
    [
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 14, method: "ping" },
    ],
    "2025-06-18",
  ],
  ["a batch holding an initialize", [INIT("2025-06-18", 15), { jsonrpc: "2.0", id: 16, method: "ping" }], undefined],
  [
    "a batch of 101",
    Array.from({ length: 101 }, (_, i) => ({ jsonrpc: "2.0", id: 100 + i, method: "ping" })),
    "2025-06-18",
  ],
  ["not JSON-RPC", { hello: "world" }, "2025-06-18"],
  ["a request without jsonrpc", { id: 17, method: "ping" }, "2025-06-18"],
];

/** [name, parsed body, MCP-Protocol-Version header, whether the direct path takes it]. */
const DIRECT_CASES: Array<[string, unknown, string | undefined, boolean]> = [
  ["a read", call(30, "read", { path: "eq.txt" }), "2025-06-18", true],
  ["a page of a read", call(31, "read", { path: "eq.txt", offset: 1, limit: 1 }), "2025-06-18", true],
  ["a read with a string id", call("s-32", "read", { path: "eq.txt" }), "2025-06-18", true],
  ["a read without a protocol version header", call(33, "read", { path: "eq.txt" }), undefined, true],
  ["a read under 2024-11-05", call(34, "read", { path: "eq.txt" }), "2024-11-05", true],
  ["a read under 2025-11-25", call(35, "read", { path: "eq.txt" }), "2025-11-25", true],
  ["a read of a missing file (a tool error)", call(36, "read", { path: "missing.txt" }), "2025-06-18", true],
  ["a read outside the project (a tool error)", call(37, "read", { path: "../outside.txt" }), "2025-06-18", true],
  [
    "project, no arguments field",
    { jsonrpc: "2.0", id: 38, method: "tools/call", params: { name: "project" } },
    "2025-06-18",
    true,
  ],
  ["glob", call(39, "glob", { pattern: "*.txt" }), "2025-06-18", true],
  ["an unknown tool", call(40, "nope", {}), "2025-06-18", false],
  ["arguments the input schema refuses", call(41, "read", { path: 7 }), "2025-06-18", false],
  ["an argument the schema does not know", call(42, "read", { path: "eq.txt", surprise: true }), "2025-06-18", false],
  [
    "a call with _meta",
    {
      jsonrpc: "2.0",
      id: 43,
      method: "tools/call",
      params: { name: "read", arguments: { path: "eq.txt" }, _meta: {} },
    },
    "2025-06-18",
    false,
  ],
  ["an unsupported protocol version header", call(44, "read", { path: "eq.txt" }), "1999-01-01", false],
  ["a batch of one call", [call(45, "read", { path: "eq.txt" })], "2025-06-18", false],
  [
    "a null id",
    { jsonrpc: "2.0", id: null, method: "tools/call", params: { name: "read", arguments: { path: "eq.txt" } } },
    "2025-06-18",
    false,
  ],
];

describe("the one-exchange transport answers as the SDK's stateless JSON transport", () => {
  let t: TestBridge;
  let s: AgentSession;
  let deps: McpDeps;
  let scope: McpScope;
  let authInfo: AuthInfo;

  beforeAll(async () => {
    t = await startTestBridge();
    s = await t.session({ write: true });
    fs.writeFileSync(path.join(t.projectDir, "eq.txt"), "same bytes\n");
    deps = {
      kernel: t.bridge.kernel,
      tools: t.bridge.tools,
      plugins: createPluginHost([]),
      states: new SessionStates(),
      publicOrigin: () => t.bridge.dataUrl,
      log: createLogger("silent"),
      signal: new AbortController().signal,
      record: createActivityRecorder(t.bridge.store.activity),
    };
    const token = s.m!.split("/").pop()!;
    scope = createAuthenticator(t.bridge.store)(token)!;
    authInfo = { token, clientId: scope.cap.sessionId, scopes: [scope.base], extra: {} };
  });
  afterAll(async () => t.close());

  async function viaSdk(body: unknown, version: string | undefined) {
    const server = createMcpServer(deps, scope);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await server.connect(transport);
    const headers: Record<string, string> = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    };
    if (version !== undefined) headers["mcp-protocol-version"] = version;
    try {
      const response = await transport.handleRequest(
        new Request("http://127.0.0.1/mcp", { method: "POST", headers, body: JSON.stringify(body) }),
        { parsedBody: body, authInfo },
      );
      return {
        status: response.status,
        contentType: response.headers.get("content-type"),
        text: await response.text(),
      };
    } finally {
      await transport.close();
      await server.close();
    }
  }

  async function viaExchange(body: unknown, version: string | undefined) {
    const answer = await exchangeLegacy(
      createMcpServer(deps, scope),
      body,
      authInfo,
      version,
      new AbortController().signal,
    );
    return {
      status: answer.status,
      contentType: answer.json === undefined ? null : "application/json",
      text: answer.json ?? "",
    };
  }

  async function viaDirect(body: unknown, version: string | undefined) {
    const tools = new DirectTools(deps, scope);
    const admitted = admitHttpCall(tools, body, version);
    if (!admitted) return undefined;
    return { status: 200, contentType: "application/json", text: await tools.answer(admitted, scope) };
  }

  it.each(DIRECT_CASES)("the direct path: %s", async (_name, body, version, taken) => {
    const expected = await viaSdk(body, version);
    const direct = await viaDirect(body, version);
    if (!taken) {
      expect(direct).toBeUndefined();
      // Left to the exchange, which answers as the SDK does.
      return expect(await viaExchange(body, version)).toEqual(expected);
    }
    expect(direct).toEqual(expected);
  });

  it.each(CASES)("%s", async (_name, body, version) => {
    const expected = await viaSdk(body, version);
    const actual = await viaExchange(body, version);
    // Nothing in these answers differs between two runs of the same call (no timings; stable fingerprints).
    expect(actual).toEqual(expected);
  });

  it("answers 499 and frees the server when the request is aborted mid-call", async () => {
    const shellSession = await t.session({ write: true, terminal: true, name: "eq-shell", root: t.projectDir });
    const token = shellSession.m!.split("/").pop()!;
    const shellScope = createAuthenticator(t.bridge.store)(token)!;
    const shellAuth = { token, clientId: shellScope.cap.sessionId, scopes: [shellScope.base], extra: {} };
    const server = createMcpServer(deps, shellScope);
    const abort = new AbortController();
    const pending = exchangeLegacy(
      server,
      call(20, "shell", { command: "sleep 2" }),
      shellAuth,
      "2025-06-18",
      abort.signal,
    );
    // Once the call runs: the shell's process is on the terminal gate.
    for (let i = 0; i < 200 && t.bridge.terminal.gate.snapshot().running === 0; i++)
      await new Promise((r) => setTimeout(r, 10));
    expect(t.bridge.terminal.gate.snapshot().running).toBe(1);
    abort.abort();
    expect(await pending).toEqual({ status: 499, json: undefined });
    expect(server.isConnected()).toBe(false);
    const aborted = new AbortController();
    aborted.abort();
    expect(
      await exchangeLegacy(server, { jsonrpc: "2.0", id: 21, method: "ping" }, authInfo, "2025-06-18", aborted.signal),
    ).toEqual({ status: 499, json: undefined });
  });
});

/**
 * TEST-ONLY plugin, never shipped: a read tool whose answer breaks the output schema it declares (a plugin is
 * JavaScript at run time; nothing but the SDK's outputSchema check stands between its answer and the client).
 */
function driftPlugin(): Plugin {
  return {
    id: "drift",
    title: "Drift (test plugin)",
    description: "Answers outside its own output schema.",
    status: async () => ({ state: "ready" }),
    tools: [
      definePluginTool({
        id: "count",
        capability: "read",
        description: "Claims to answer a number, answers a string.",
        schema: z.object({ label: z.string() }),
        output: z.strictObject({ ok: z.literal(true), count: z.number() }),
        execute: (args) => ({ ok: true as const, count: `not a number: ${args.label}` as unknown as number }),
      }),
    ],
  };
}

describe("an answer that breaks its tool's outputSchema", () => {
  let t: TestBridge;
  let deps: McpDeps;
  let scope: McpScope;
  let authInfo: AuthInfo;

  beforeAll(async () => {
    const plugins = [driftPlugin()];
    t = await startTestBridge({}, { plugins });
    const s = await t.session();
    deps = {
      kernel: t.bridge.kernel,
      tools: t.bridge.tools,
      plugins: createPluginHost(plugins),
      states: new SessionStates(),
      publicOrigin: () => t.bridge.dataUrl,
      log: createLogger("silent"),
      signal: new AbortController().signal,
      record: createActivityRecorder(t.bridge.store.activity),
    };
    const token = s.r.split("/").pop()!;
    scope = createAuthenticator(t.bridge.store)(token)!;
    authInfo = { token, clientId: scope.cap.sessionId, scopes: [scope.base], extra: {} };
  });
  afterAll(async () => t.close());

  it("is refused by the direct path in the SDK's words and bytes", async () => {
    const body = call(50, "drift_count", { label: "x" });
    const server = createMcpServer(deps, scope);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await server.connect(transport);
    const headers = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-06-18",
    };
    const response = await transport.handleRequest(
      new Request("http://127.0.0.1/mcp", { method: "POST", headers, body: JSON.stringify(body) }),
      { parsedBody: body, authInfo },
    );
    const expected = await response.text();
    await transport.close();
    await server.close();
    const tools = new DirectTools(deps, scope);
    const admitted = admitHttpCall(tools, body, "2025-06-18");
    expect(admitted).toBeDefined();
    const direct = await tools.answer(admitted!, scope);
    expect(JSON.parse(direct)).toMatchObject({
      id: 50,
      result: {
        isError: true,
        content: [
          { text: expect.stringMatching(/^Output validation error: Invalid structured content for tool drift_count/) },
        ],
      },
    });
    expect(direct).toBe(expected);
  });
});
