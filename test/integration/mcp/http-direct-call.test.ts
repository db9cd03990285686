// The 2025-era HTTP leg's direct tools/call and ping path (server/mcp/http-direct-call.ts) against the SDK's dispatch on the
// pooled exchange, through a real bridge over real HTTP: every call is POSTed twice, once plain (answered without
// the SDK's dispatch) and once with an empty _meta (which the direct path leaves to the exchange and the SDK, and
// which changes nothing in the answer); status, headers and body bytes must be the same. Then a client that hangs
// up mid-call gets nothing written while its call still runs to its end, and the bridge keeps serving.
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestBridge, type AgentSession, type TestBridge, writeAsAgent } from "../../helpers/bridge.js";
import { DIRECT_CALL_CASES, toolCall as call, writeDirectCallFixture } from "../../helpers/mcp-direct-cases.js";

const LEGACY_HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": "2025-06-18",
};
/** Bound on the polls for a hung-up call's activity row (50 ms apart). */
const MAX_POLLS = 200;

/** Status, headers (without the per-connection ones) and body bytes. */
async function snapshot(res: Response): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  const headers: Record<string, string> = {};
  for (const [k, v] of res.headers) if (!["date", "connection", "keep-alive"].includes(k)) headers[k] = v;
  return { status: res.status, headers, body: await res.text() };
}

describe("the HTTP leg's direct tools/call path", () => {
  let t: TestBridge;
  let s: AgentSession;
  const post = async (message: unknown, headers: Record<string, string> = LEGACY_HEADERS) =>
    snapshot(await fetch(`${s.m}/mcp`, { method: "POST", headers, body: JSON.stringify(message) }));

  beforeAll(async () => {
    t = await startTestBridge();
    s = await t.session({ write: true, terminal: true, name: "http-direct", root: t.projectDir });
    writeDirectCallFixture(t.projectDir);
  });
  afterAll(async () => t.close());

  it.each(DIRECT_CALL_CASES)("answers %s with the SDK's status, headers and bytes", async (_name, tool, args) => {
    const direct = await post(call(5, tool, args));
    const viaSdk = await post(call(5, tool, args, {}));
    expect(direct.status).toBe(200);
    expect(JSON.parse(direct.body)).toMatchObject({ jsonrpc: "2.0", id: 5, result: { content: expect.any(Array) } });
    expect(direct).toEqual(viaSdk);
  });

  it.each([
    ["a number id", 8],
    ["a string id", "ping-8"],
  ])("answers a plain ping (%s) with the SDK's status, headers and bytes", async (_name, id) => {
    const direct = await post({ jsonrpc: "2.0", id, method: "ping" });
    // params with an empty _meta is left to the exchange and the SDK's ping handler (direct-ping.ts).
    const viaSdk = await post({ jsonrpc: "2.0", id, method: "ping", params: { _meta: {} } });
    expect(direct.status).toBe(200);
    expect(JSON.parse(direct.body)).toEqual({ jsonrpc: "2.0", id, result: {} });
    expect(direct).toEqual(viaSdk);
    expect(await post({ jsonrpc: "2.0", id, method: "ping", params: {} })).toEqual(viaSdk);
  });

  it("answers without a protocol version header as with one", async () => {
    const { "mcp-protocol-version": _version, ...bare } = LEGACY_HEADERS;
    expect(await post(call(6, "read", { path: "notes.txt" }), bare)).toEqual(
      await post(call(6, "read", { path: "notes.txt" }, {}), bare),
    );
  });

  it("leaves a plain call sent under a 2026-07-28 header to the modern leg, which refuses it for its missing envelope", async () => {
    const answer = await post(call(10, "read", { path: "notes.txt" }), {
      ...LEGACY_HEADERS,
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/call",
      "mcp-name": "read",
    });
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({ jsonrpc: "2.0", error: { code: -32602 } });
  });

  it("answers an edit with the SDK's bytes, apart from the call id the journal draws for each intent", async () => {
    writeAsAgent(path.join(t.projectDir, "edit.txt"), "value A\n");
    const direct = await post(call(7, "edit", { path: "edit.txt", oldString: "value A", newString: "value B" }));
    const viaSdk = await post(call(7, "edit", { path: "edit.txt", oldString: "value B", newString: "value A" }, {}));
    expect(fs.readFileSync(path.join(t.projectDir, "edit.txt"), "utf8")).toBe("value A\n");
    const masked = (answer: { body: string }) => ({
      ...answer,
      body: answer.body.replace(/"callId":"[^"]+"/g, '"callId":"<id>"').replace(/value [AB]/g, "value <x>"),
    });
    expect(JSON.parse(direct.body)).toMatchObject({ id: 7, result: { structuredContent: { ok: true } } });
    expect(masked(direct)).toEqual(masked(viaSdk));
  });

  it("writes nothing to a client that hung up mid-call, lets the call finish, and keeps serving", async () => {
    const url = new URL(`${s.m}/mcp`);
    const hungUp = new Promise<string>((resolve) => {
      const req = http.request(url, { method: "POST", headers: LEGACY_HEADERS }, () => resolve("answered"));
      req.on("error", () => resolve("hung up"));
      req.end(JSON.stringify(call(8, "shell", { command: "sleep 0.3; echo late" })));
      // Once the call runs (its process is on the terminal gate), the client goes away.
      void (async () => {
        for (let i = 0; i < MAX_POLLS && t.bridge.terminal.gate.snapshot().running === 0; i++)
          await new Promise((r) => setTimeout(r, 10));
        req.destroy();
      })();
    });
    expect(await hungUp).toBe("hung up");
    let finished = false;
    for (let i = 0; i < MAX_POLLS && !finished; i++) {
      t.bridge.store.activity.flush();
      finished = t.bridge.store.activity
        .list({ sessionId: s.sessionId, limit: 50 })
        .some((r) => r.params?.mcp === "shell" && r.ok);
      if (!finished) await new Promise((r) => setTimeout(r, 50));
    }
    expect(finished).toBe(true);
    expect(JSON.parse((await post(call(9, "read", { path: "notes.txt", limit: 1 }))).body)).toMatchObject({
      id: 9,
      result: { structuredContent: { ok: true } },
    });
  });
});
