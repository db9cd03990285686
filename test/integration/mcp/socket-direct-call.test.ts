// The MCP socket's direct tools/call path (server/mcp/socket-direct-call.ts) against the SDK's own: on one
// 2025-era connection, every call is sent twice with the same id, once plain (answered without the SDK's dispatch)
// and once with an empty _meta (which the direct path leaves to the SDK, and which changes nothing in the answer);
// the two answer lines must be the same bytes. Then a cancelled direct call is never answered, a 2026-era
// connection still gets the SDK's answers, and refusals the SDK words (unknown tool, bad arguments) stay its own.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestBridge, type AgentSession, type TestBridge, writeAsAgent } from "../../helpers/bridge.js";
import { DIRECT_CALL_CASES, toolCall as call, writeDirectCallFixture } from "../../helpers/mcp-direct-cases.js";
import {
  bearerOf,
  connectLines as connect,
  LINE_TIMEOUT_MS,
  type LineClient as Lines,
} from "../../helpers/mcp-socket.js";

const LEGACY_INIT = {
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "direct-test", version: "0" } },
};

describe("the MCP socket's direct tools/call path", () => {
  let t: TestBridge;
  let s: AgentSession;
  let socketFile: string;
  const open: Lines[] = [];
  const session = async (bearer: string, init: unknown = LEGACY_INIT) => {
    const c = await connect(socketFile);
    open.push(c);
    c.send({ "urlbridge/hello": { v: 1, bearer } });
    expect(JSON.parse(await c.next())).toEqual({ "urlbridge/ready": { v: 1 } });
    if (init) {
      c.send(init);
      await c.next();
      c.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    }
    return c;
  };

  beforeAll(async () => {
    t = await startTestBridge();
    s = await t.session({ write: true, terminal: true, name: "direct-project" });
    writeDirectCallFixture(t.projectDir);
    socketFile = path.join(t.stateDir, "mcp.sock");
  });
  afterAll(async () => {
    for (const c of open) c.close();
    await t.close();
  });

  it.each(DIRECT_CALL_CASES)("answers %s with the SDK's bytes", async (_name, tool, args) => {
    const c = await session(bearerOf(s.m!));
    c.send(call(5, tool, args));
    const direct = await c.next();
    c.send(call(5, tool, args, {}));
    const viaSdk = await c.next();
    expect(JSON.parse(direct)).toMatchObject({ jsonrpc: "2.0", id: 5, result: { content: expect.any(Array) } });
    expect(direct).toBe(viaSdk);
  });

  it.each(["2024-11-05", "2025-03-26", "2025-11-25"])(
    "answers the same bytes as the SDK on a connection initialized with %s",
    async (version) => {
      const c = await session(bearerOf(s.m!), {
        ...LEGACY_INIT,
        params: { ...LEGACY_INIT.params, protocolVersion: version },
      });
      c.send(call(4, "read", { path: "notes.txt" }));
      const direct = await c.next();
      c.send(call(4, "read", { path: "notes.txt" }, {}));
      expect(direct).toBe(await c.next());
    },
  );

  it("answers an edit with the SDK's bytes, apart from the call id the journal draws for each intent", async () => {
    const c = await session(bearerOf(s.m!));
    writeAsAgent(path.join(t.projectDir, "edit.txt"), "value A\n");
    c.send(call(6, "edit", { path: "edit.txt", oldString: "value A", newString: "value B" }));
    const direct = await c.next();
    c.send(call(6, "edit", { path: "edit.txt", oldString: "value B", newString: "value A" }, {}));
    const viaSdk = await c.next();
    expect(fs.readFileSync(path.join(t.projectDir, "edit.txt"), "utf8")).toBe("value A\n");
    const masked = (line: string) =>
      line.replace(/"callId":"[^"]+"/g, '"callId":"<id>"').replace(/value [AB]/g, "value <x>");
    expect(JSON.parse(direct)).toMatchObject({ id: 6, result: { structuredContent: { ok: true } } });
    expect(masked(direct)).toBe(masked(viaSdk));
  });

  it("leaves refusals the SDK words to the SDK: an unknown tool, arguments the input schema refuses", async () => {
    const c = await session(bearerOf(s.m!));
    c.send(call(7, "no-such-tool", {}));
    expect(JSON.parse(await c.next())).toMatchObject({ id: 7 });
    c.send(call(8, "read", { path: "notes.txt", offset: 0 }));
    const refused = JSON.parse(await c.next()) as {
      id: number;
      result: { isError: boolean; content: Array<{ text: string }> };
    };
    expect(refused).toMatchObject({ id: 8, result: { isError: true } });
    expect(refused.result.content[0]!.text).toMatch(/^Input validation error: Invalid arguments for tool read/);
    c.send(call(9, "read", { path: "notes.txt", surprise: true }));
    expect((JSON.parse(await c.next()) as { result: { isError: boolean } }).result.isError).toBe(true);
  });

  it("never answers a direct call its client cancelled, and keeps serving", async () => {
    const c = await session(bearerOf(s.m!));
    c.send(call(10, "shell", { command: "sleep 0.3; echo late" }));
    c.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 10, reason: "test" } });
    c.send({ jsonrpc: "2.0", id: 11, method: "ping" });
    expect(JSON.parse(await c.next())).toMatchObject({ id: 11, result: {} });
    // The shell finishes (it was not stopped, as over the SDK) while the bridge answers nothing for it.
    const deadline = Date.now() + LINE_TIMEOUT_MS;
    for (;;) {
      t.bridge.store.activity.flush();
      const done = t.bridge.store.activity
        .list({ sessionId: s.sessionId, limit: 50 })
        .some((r) => r.params?.mcp === "shell" && r.params?.command !== undefined);
      if (done || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    c.send(call(12, "read", { path: "notes.txt", limit: 1 }));
    expect(JSON.parse(await c.next())).toMatchObject({ id: 12, result: { structuredContent: { ok: true } } });
  });

  it("is not used on a connection the initialize did not pin to a 2025 revision: calls before it go to the SDK", async () => {
    const c = await session(bearerOf(s.m!), null);
    c.send(call(13, "read", { path: "notes.txt" }));
    const before = await c.next();
    c.send(LEGACY_INIT);
    await c.next();
    c.send(call(13, "read", { path: "notes.txt" }));
    expect(await c.next()).toBe(before);
  });
});
