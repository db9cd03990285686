// 2025-era HTTP POSTs reuse idle McpServers per tool listing (server/mcp/server-pool.ts): a reused server runs each
// call with its own request's capability, concurrent requests never share one, and a changed listing (a permission
// turned off) is never answered from a server built for the old one.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { leavesNoState } from "../../../server/mcp/server-pool.js";
import { makeTempDir, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";

const LEGACY_HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": "2025-06-18",
};

interface RpcAnswer {
  id: number;
  result?: {
    structuredContent?: Record<string, unknown>;
    content?: Array<{ text?: string }>;
    tools?: Array<{ name: string }>;
    protocolVersion?: string;
  };
}

describe("idle servers reused across 2025-era POSTs", () => {
  let t: TestBridge;
  let a: AgentSession;
  let b: AgentSession;
  let ids = 0;
  const post = async (s: AgentSession, message: Record<string, unknown>): Promise<RpcAnswer> => {
    const res = await fetch(`${s.m ?? s.r}/mcp`, {
      method: "POST",
      headers: LEGACY_HEADERS,
      body: JSON.stringify({ jsonrpc: "2.0", id: ++ids, ...message }),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as RpcAnswer;
  };
  const read = (s: AgentSession, file: string) =>
    post(s, { method: "tools/call", params: { name: "read", arguments: { path: file } } });
  const textOf = (answer: RpcAnswer) => (answer.result?.content ?? []).map((c) => c.text ?? "").join("\n");

  beforeAll(async () => {
    t = await startTestBridge();
    const rootA = makeTempDir("pool-a");
    const rootB = makeTempDir("pool-b");
    fs.writeFileSync(path.join(rootA, "who.txt"), "project A\n");
    fs.writeFileSync(path.join(rootB, "who.txt"), "project B\n");
    // Same permissions, so the same listing: one pool serves both capabilities.
    a = await t.session({ write: true, terminal: true, root: rootA, name: "pool-a" });
    b = await t.session({ write: true, terminal: true, root: rootB, name: "pool-b" });
  });
  afterAll(async () => t.close());

  it("answers every call with its own capability's project, sequential and concurrent", async () => {
    for (let i = 0; i < 6; i++) {
      expect(textOf(await read(i % 2 ? a : b, "who.txt"))).toContain(i % 2 ? "project A" : "project B");
    }
    const sessions = Array.from({ length: 24 }, (_, i) => (i % 3 === 0 ? b : a));
    const answers = await Promise.all(sessions.map((s) => read(s, "who.txt")));
    answers.forEach((answer, i) => {
      expect(textOf(answer)).toContain(sessions[i] === a ? "project A" : "project B");
      expect(textOf(answer)).not.toContain(sessions[i] === a ? "project B" : "project A");
    });
  });

  it("answers initialize from a fresh state each time, and tools/list after it unchanged", async () => {
    const before = await post(a, { method: "tools/list", params: {} });
    for (const version of ["2025-03-26", "2025-06-18"]) {
      const init = await post(a, {
        method: "initialize",
        params: { protocolVersion: version, capabilities: {}, clientInfo: { name: `c-${version}`, version: "0" } },
      });
      expect(init.result?.protocolVersion).toBe(version);
    }
    expect(await post(a, { method: "tools/list", params: {} })).toEqual({ ...before, id: ids });
  });

  it("lists the new tools once the project loses a permission (its sessions get a new capability)", async () => {
    expect((await post(b, { method: "tools/list", params: {} })).result?.tools?.map((tool) => tool.name)).toContain(
      "shell",
    );
    const patched = await t.api<{ rotatedSessions: string[] }>("PATCH", `/api/projects/${b.projectId}`, {
      permissions: { terminal: false },
    });
    expect(patched.body.rotatedSessions).toEqual([b.sessionId]);
    const view = (await t.api<{ bearer: string }>("GET", `/api/sessions/${b.sessionId}/mcp`)).body;
    const fresh = { ...b, m: `${t.bridge.dataUrl}/v0/${view.bearer}`, r: `${t.bridge.dataUrl}/v0/${view.bearer}` };
    const names = (await post(fresh, { method: "tools/list", params: {} })).result?.tools?.map((tool) => tool.name);
    expect(names).toContain("edit");
    expect(names).not.toContain("shell");
    // Project A kept its permissions and its listing.
    expect((await post(a, { method: "tools/list", params: {} })).result?.tools?.map((tool) => tool.name)).toContain(
      "shell",
    );
  });
});

describe("leavesNoState", () => {
  it.each([
    [{ jsonrpc: "2.0", id: 1, method: "tools/call" }, true],
    [{ jsonrpc: "2.0", id: 1, method: "tools/list" }, true],
    [{ jsonrpc: "2.0", id: 1, method: "ping" }, true],
    [{ jsonrpc: "2.0", method: "notifications/cancelled" }, true],
    [
      [
        { jsonrpc: "2.0", id: 1, method: "ping" },
        { jsonrpc: "2.0", id: 2, method: "tools/list" },
      ],
      true,
    ],
    [{ jsonrpc: "2.0", id: 1, method: "initialize" }, false],
    [{ jsonrpc: "2.0", id: 1, method: "logging/setLevel" }, false],
    [
      [
        { jsonrpc: "2.0", id: 1, method: "ping" },
        { jsonrpc: "2.0", id: 2, method: "initialize" },
      ],
      false,
    ],
    [[], false],
    [null, false],
  ])("%j -> %s", (message, expected) => {
    expect(leavesNoState(message)).toBe(expected);
  });
});
