// tools/list's size on the wire per capability (issue 26 item 2): every conversation pays the listing in context
// before its first call, so a mutation session with every permission lists its tools in at most 24 KiB.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";
import { tokenOfBase } from "../../helpers/mcp-clients.js";

const MODERN = "2026-07-28";
const meta = {
  "io.modelcontextprotocol/protocolVersion": MODERN,
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "0" },
  "io.modelcontextprotocol/clientCapabilities": {},
};
const LIST = { jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: meta } };
export const TOOLS_LIST_BUDGET_BYTES = 24 * 1024;

let tb: TestBridge;
let readOnly: AgentSession;
let everything: AgentSession;

beforeAll(async () => {
  tb = await startTestBridge();
  readOnly = await tb.session();
  everything = await tb.session({ write: true, terminal: true, web: true });
});
afterAll(async () => {
  await tb.close();
});

/** The tools/list answer's body bytes as a client receives them, and the tools it names. */
async function listing(base: string): Promise<{ bytes: number; tools: Array<{ name: string }> }> {
  const res = await fetch(`${tb.bridge.dataUrl}/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${tokenOfBase(base)}`,
      "mcp-protocol-version": MODERN,
      "mcp-method": "tools/list",
    },
    body: JSON.stringify(LIST),
  });
  const body = Buffer.from(await res.arrayBuffer());
  expect(res.status).toBe(200);
  const parsed = JSON.parse(body.toString("utf8")) as { result: { tools: Array<{ name: string }> } };
  const perTool = parsed.result.tools.map((t) => `${t.name}=${Buffer.byteLength(JSON.stringify(t))}`).join(" ");
  console.log(
    `tools/list ${base === readOnly.r ? "read" : "mutation(all)"}: ${body.length} bytes, ${parsed.result.tools.length} tools: ${perTool}`,
  );
  return { bytes: body.length, tools: parsed.result.tools };
}

describe("tools/list budget", () => {
  it("a read-only session lists its tools in at most 24 KiB", async () => {
    const { bytes, tools } = await listing(readOnly.r);
    expect(tools.map((t) => t.name)).toContain("read");
    expect(bytes).toBeLessThanOrEqual(TOOLS_LIST_BUDGET_BYTES);
  });

  it("a mutation session with every permission lists every tool in at most 24 KiB", async () => {
    const { bytes, tools } = await listing(everything.m!);
    expect(tools.map((t) => t.name)).toEqual(
      expect.arrayContaining(["read", "edit", "write", "patch", "shell", "webfetch", "websearch", "mutation_result"]),
    );
    expect(bytes).toBeLessThanOrEqual(TOOLS_LIST_BUDGET_BYTES);
  });
});
