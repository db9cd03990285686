// Issue 26 item 9 / Build 6: protocol hygiene. initialize, tools/list and tools/call with missing or wrongly typed
// params answer JSON-RPC -32602 Invalid params in a few words (never -32603 with zod's issue dump), the same over
// the 2025-era HTTP leg, the 2026-07-28 HTTP leg and the MCP socket (what the stdio relay speaks); and the first
// MCP call after a start converts no schema: the bridge did that work in the background at start-up (mcp/warm.ts).
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { outputSchemaConversions } from "../../../server/mcp/server.js";
import { startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";
import { tokenOfBase } from "../../helpers/mcp-clients.js";
import { connectLines, type LineClient } from "../../helpers/mcp-socket.js";

const MODERN = "2026-07-28";
const modernMeta = {
  "io.modelcontextprotocol/protocolVersion": MODERN,
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "0" },
  "io.modelcontextprotocol/clientCapabilities": {},
};

/** Requests whose params the specification refuses: [title, method, params]. */
const INVALID: Array<[string, string, unknown]> = [
  ["initialize without params", "initialize", undefined],
  [
    "initialize with a numeric protocolVersion and no clientInfo",
    "initialize",
    { protocolVersion: 5, capabilities: {} },
  ],
  ["tools/list with a numeric cursor", "tools/list", { cursor: 5 }],
  ["tools/call without params", "tools/call", undefined],
  ["tools/call with a numeric name", "tools/call", { name: 5 }],
  ["tools/call with string arguments", "tools/call", { name: "read", arguments: "x" }],
];

let t: TestBridge;
let s: AgentSession;
let token: string;
const lines: LineClient[] = [];

beforeAll(async () => {
  t = await startTestBridge();
  s = await t.session({ write: true, terminal: true, web: true });
  token = tokenOfBase(s.m!);
});
afterAll(async () => {
  for (const l of lines) l.close();
  await t.close();
});

function post(body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${t.bridge.dataUrl}/v0/${token}/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body: JSON.stringify(body),
  });
}

type RpcAnswer = { jsonrpc: string; id: unknown; error?: { code: number; message: string }; result?: unknown };

function expectShortInvalidParams(answer: RpcAnswer, id: number, method: string): void {
  expect(answer).toMatchObject({ jsonrpc: "2.0", id, error: { code: -32602 } });
  const message = answer.error!.message;
  expect(message.startsWith(`Invalid params for ${method}: `), message).toBe(true);
  expect(message.length).toBeLessThanOrEqual(400);
  // No validator dump: zod's issue objects carry these keys.
  expect(message).not.toMatch(/"code"|"path"|invalid_type|\[\s*\{/);
}

describe("invalid params answer -32602 in a few words", () => {
  it("names the field and what it should be", async () => {
    const res = await post({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: 5, capabilities: {}, clientInfo: { name: "x", version: "0" } },
    });
    const answer = (await res.json()) as RpcAnswer;
    expect(answer.error?.message).toBe(
      "Invalid params for initialize: params.protocolVersion: expected string, received number. See the MCP specification for initialize's params.",
    );
  });

  it.each(INVALID)("over the 2025-era HTTP leg: %s", async (_title, method, params) => {
    const res = await post({ jsonrpc: "2.0", id: 7, method, ...(params === undefined ? {} : { params }) });
    expect(res.status).toBe(200);
    expectShortInvalidParams((await res.json()) as RpcAnswer, 7, method);
  });

  it.each(INVALID.filter(([, method]) => method !== "initialize"))(
    "over the 2026-07-28 HTTP leg: %s",
    async (_title, method, params) => {
      const body = {
        jsonrpc: "2.0",
        id: 8,
        method,
        params: { ...((params as object | undefined) ?? {}), _meta: modernMeta },
      };
      // The 2026-07-28 revision also wants the tool's name as a header (its own -32020 otherwise).
      const name = (params as { name?: unknown } | undefined)?.name;
      const res = await post(body, {
        "mcp-protocol-version": MODERN,
        "mcp-method": method,
        ...(typeof name === "string" ? { "mcp-name": name } : {}),
      });
      expectShortInvalidParams((await res.json()) as RpcAnswer, 8, method);
    },
  );

  it("over the MCP socket, which the stdio relay speaks", async () => {
    const c = await connectLines(path.join(t.stateDir, "mcp.sock"));
    lines.push(c);
    c.send({ "urlbridge/hello": { v: 1, bearer: token } });
    expect(JSON.parse(await c.next())).toHaveProperty("urlbridge/ready");
    for (const [i, [, method, params]] of INVALID.entries()) {
      c.send({ jsonrpc: "2.0", id: 100 + i, method, ...(params === undefined ? {} : { params }) });
      expectShortInvalidParams(JSON.parse(await c.next()) as RpcAnswer, 100 + i, method);
    }
  });

  it("still answers valid requests on the same legs", async () => {
    const list = (await (await post({ jsonrpc: "2.0", id: 9, method: "tools/list", params: {} })).json()) as RpcAnswer;
    expect((list.result as { tools: unknown[] }).tools.length).toBeGreaterThan(10);
  });
});

describe("the first MCP call after a start", () => {
  it("converts no schema: the bridge converted every listable tool's outputSchema in the background at start-up", async () => {
    const fresh = await startTestBridge();
    try {
      const agent = await fresh.session({ write: true, terminal: true, web: true });
      await fresh.bridge.mcpWarm;
      const before = outputSchemaConversions();
      const url = `${fresh.bridge.dataUrl}/v0/${tokenOfBase(agent.m!)}/mcp`;
      const send = (body: unknown) =>
        fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
          body: JSON.stringify(body),
        });
      const listed = (await (
        await send({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} })
      ).json()) as RpcAnswer;
      expect(
        (listed.result as { tools: Array<{ outputSchema?: unknown }> }).tools.every((tool) => tool.outputSchema),
      ).toBe(true);
      const called = (await (
        await send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "project", arguments: {} } })
      ).json()) as RpcAnswer;
      expect(called.result).toMatchObject({ structuredContent: { ok: true } });
      expect(outputSchemaConversions()).toBe(before);
    } finally {
      await fresh.close();
    }
  });
});
