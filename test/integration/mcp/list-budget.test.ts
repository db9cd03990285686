// tools/list's size on the wire per capability (issue 26 item 2): every conversation pays the listing in context
// before its first call, so a mutation session with every permission lists its tools in at most 24 KiB, and so does
// a worktree session, the one kind of session git_commit is listed to (issue 31).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentGet, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";
import { makeRepository } from "../../helpers/git-repo.js";
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
let worktreeM: string;

beforeAll(async () => {
  tb = await startTestBridge();
  readOnly = await tb.session();
  everything = await tb.session({ write: true, terminal: true, web: true });
  const project = await tb.api<{ id: string }>("POST", "/api/projects", {
    name: "worktrees",
    root: makeRepository(),
    permissions: { write: true, terminal: true, web: true },
  });
  const session = await tb.api<{ initUrl: string }>("POST", "/api/sessions", {
    projectId: project.body.id,
    worktree: {},
  });
  worktreeM = (await agentGet<{ bases: { m: string } }>(session.body.initUrl)).bases.m;
});
afterAll(async () => {
  await tb.close();
});

/** The tools/list answer's body bytes as a client receives them, and the tools it names. */
async function listing(base: string, label: string): Promise<{ bytes: number; tools: Array<{ name: string }> }> {
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
  console.log(`tools/list ${label}: ${body.length} bytes, ${parsed.result.tools.length} tools: ${perTool}`);
  return { bytes: body.length, tools: parsed.result.tools };
}

describe("tools/list budget", () => {
  it("a read-only session lists its tools in at most 24 KiB", async () => {
    const { bytes, tools } = await listing(readOnly.r, "read");
    expect(tools.map((t) => t.name)).toContain("read");
    expect(bytes).toBeLessThanOrEqual(TOOLS_LIST_BUDGET_BYTES);
  });

  it("a mutation session with every permission lists every tool in at most 24 KiB", async () => {
    const { bytes, tools } = await listing(everything.m!, "mutation(all)");
    expect(tools.map((t) => t.name)).toEqual(
      expect.arrayContaining(["read", "edit", "write", "patch", "shell", "webfetch", "websearch", "mutation_result"]),
    );
    expect(tools.map((t) => t.name)).not.toContain("git_commit");
    expect(bytes).toBeLessThanOrEqual(TOOLS_LIST_BUDGET_BYTES);
  });

  it("a worktree session with every permission lists git_commit too, in at most 24 KiB", async () => {
    const { bytes, tools } = await listing(worktreeM, "mutation(all), worktree session");
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(["git_commit", "edit", "shell", "webfetch"]));
    expect(bytes).toBeLessThanOrEqual(TOOLS_LIST_BUDGET_BYTES);
  });
});
