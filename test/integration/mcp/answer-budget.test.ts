// Default answers within the MCP answer budget (issue 26 item 3): Codex 0.169 keeps ~12 KB of a tool result and
// cuts the middle of anything longer, unseen. A default grep or glob whose answer would run past
// MCP_ANSWER_BUDGET_BYTES keeps whole matches in order and says it stopped (truncated, a notice to narrow).
import fs from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { InMemoryTransport } from "@modelcontextprotocol/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createActivityRecorder } from "../../../server/edge/activity-recorder.js";
import { createAuthenticator } from "../../../server/gateway/authenticate.js";
import { SessionStates } from "../../../server/kernel/tool/session-state.js";
import { createLogger } from "../../../server/log.js";
import { createMcpServer } from "../../../server/mcp/server.js";
import { MCP_ANSWER_BUDGET_BYTES } from "../../../server/mcp/tools/spec.js";
import { createPluginHost } from "../../../server/plugins/host.js";
import { giveToAgent, startTestBridge, type TestBridge } from "../../helpers/bridge.js";

type Result = Awaited<ReturnType<Client["callTool"]>>;

let tb: TestBridge;
let client: Client;

function put(name: string, content: string): void {
  const file = path.join(tb.projectDir, name);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content);
  giveToAgent(file, false);
}

const body = (result: Result) => result.structuredContent as Record<string, unknown>;
const textOf = (result: Result) =>
  (result.content as Array<{ type: string; text?: string }>).map((c) => c.text ?? "").join("\n");

beforeAll(async () => {
  tb = await startTestBridge();
  const session = await tb.session();
  const scope = createAuthenticator(tb.bridge.store)(session.r.split("/").pop()!)!;
  const server = createMcpServer(
    {
      kernel: tb.bridge.kernel,
      tools: tb.bridge.tools,
      plugins: createPluginHost([]),
      states: new SessionStates(),
      publicOrigin: () => tb.bridge.dataUrl,
      log: createLogger("silent"),
      signal: new AbortController().signal,
      record: createActivityRecorder(tb.bridge.store.activity),
    },
    scope,
  );
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  client = new Client({ name: "answer-budget-test", version: "1.0.0" });
  await client.connect(clientSide);
  // 150 matching lines of ~200 characters in one file, and 300 files with long names.
  put("wide/lines.txt", Array.from({ length: 150 }, (_, i) => `needle ${i + 1} ${"x".repeat(190)}\n`).join(""));
  for (let i = 0; i < 300; i++)
    put(`many/a-rather-long-folder-name/file-with-a-long-descriptive-name-${String(i).padStart(3, "0")}.txt`, "x\n");
  put("few/one.txt", "needle here\nnot this\nneedle there\n");
  // 200 exported functions of 3 lines each: an outline of 200 declarations, twice the budget.
  put(
    "big.ts",
    Array.from(
      { length: 200 },
      (_, i) => `export function handlerNumber${i + 1}(value: number): number {\n  return value;\n}\n`,
    ).join(""),
  );
  // The outline worker loads its parser on first use (seconds on a loaded machine): load it here, not in the test.
  put("warm.ts", "export const warm = 1;\n");
  await client.callTool({ name: "outline", arguments: { path: "warm.ts" } });
});
afterAll(async () => {
  await client?.close();
  await tb.close();
});

describe("default answers within the MCP answer budget", () => {
  it("grep keeps whole matching lines in order while they fit, and says it stopped", async () => {
    const result = await client.callTool({ name: "grep", arguments: { pattern: "needle", path: "wide" } });
    const found = body(result);
    expect(Buffer.byteLength(JSON.stringify(found))).toBeLessThanOrEqual(MCP_ANSWER_BUDGET_BYTES);
    const lines = (found.files as Array<{ lines: Array<{ line: number; text: string }> }>)[0]!.lines;
    expect(lines.length).toBeGreaterThan(20);
    expect(lines.map((l) => l.line)).toEqual(Array.from({ length: lines.length }, (_, i) => i + 1));
    expect(found).toMatchObject({ truncated: true, matchedLines: lines.length });
    expect(String(found.notice)).toContain(`Showing ${lines.length} of 100 matching lines`);
    expect(textOf(result)).toContain("narrow with path or include");
  });

  it("grep answers that fit are left whole", async () => {
    const found = body(await client.callTool({ name: "grep", arguments: { pattern: "needle", path: "few" } }));
    expect(found).toMatchObject({ truncated: false, matchedLines: 2 });
    expect(found).not.toHaveProperty("notice");
  });

  it("glob keeps whole paths in order while they fit, says it stopped, and offers no URL to continue", async () => {
    const result = await client.callTool({ name: "glob", arguments: { pattern: "*.txt", path: "many" } });
    const found = body(result);
    expect(Buffer.byteLength(JSON.stringify(found))).toBeLessThanOrEqual(MCP_ANSWER_BUDGET_BYTES);
    const results = found.results as Array<{ path: string }>;
    expect(results.length).toBeGreaterThan(50);
    expect(found).toMatchObject({ truncated: true, count: results.length });
    expect(found).not.toHaveProperty("next");
    expect(String(found.notice)).toContain(`Showing ${results.length} of 200 files`);
    expect(textOf(result)).toContain("More files may match");
  });

  it("outline keeps declarations in order while they fit, and next reads from the first one left out", async () => {
    const found = body(await client.callTool({ name: "outline", arguments: { path: "big.ts" } }));
    expect(Buffer.byteLength(JSON.stringify(found))).toBeLessThanOrEqual(MCP_ANSWER_BUDGET_BYTES);
    const declarations = found.declarations as Array<{ name: string; line: number }>;
    expect(declarations.length).toBeGreaterThan(20);
    expect(declarations.map((d) => d.name)).toEqual(
      Array.from({ length: declarations.length }, (_, i) => `handlerNumber${i + 1}`),
    );
    expect(found).toMatchObject({
      truncated: true,
      next: { tool: "read", arguments: { path: "big.ts", offset: declarations.length * 3 + 1 } },
    });
    expect(String(found.notice)).toContain(`${declarations.length} of 200 declarations`);
  });
});
