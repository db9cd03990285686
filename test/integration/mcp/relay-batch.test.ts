// A JSON-RPC batch (a 2025-era client's JSON array) through the real stdio relay: over the bridge's MCP socket
// (server/mcp/socket-batch.ts) it is answered as over the relay's HTTP leg (legacy-exchange.ts), the same answers in
// one line of the same shape: an array in request order, one request's answer alone, nothing for notifications only.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MCP_MAX_BATCH_SIZE } from "../../../server/mcp/limits.js";
import { startTestBridge, TEST_OPERATOR_TOKEN, type AgentSession, type TestBridge } from "../../helpers/bridge.js";
import { bearerOf, connectLines } from "../../helpers/mcp-socket.js";
import { startRelay } from "../../helpers/relay-process.js";
import { cliEnv } from "../cli/run-cli.js";

const INIT = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "batch-test", version: "0" } },
};
const read = (id: number, limit: number) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "read", arguments: { path: "notes.txt", limit } },
});
const note = { jsonrpc: "2.0", method: "notifications/roots/list_changed" };
/** Batches with an answer, and the shape it must have. */
const BATCHES: Array<[string, unknown[]]> = [
  [
    "three requests and a notification",
    [{ jsonrpc: "2.0", id: 2, method: "ping" }, read(3, 1), note, { jsonrpc: "2.0", id: 4, method: "tools/list" }],
  ],
  ["one request", [read(5, 2)]],
  [
    "a call of an unknown tool among others",
    [
      { jsonrpc: "2.0", id: 6, method: "ping" },
      { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "nope", arguments: {} } },
    ],
  ],
];

describe("a JSON-RPC batch through the stdio relay", () => {
  let t: TestBridge;
  let s: AgentSession;
  let env: NodeJS.ProcessEnv;

  /** Every line the relay answers: the initialize, each batch, and a ping after the notifications-only batch. */
  async function exchange(): Promise<string[]> {
    const relay = startRelay("batch-project-1", env);
    const lines: string[] = [];
    try {
      relay.send(INIT);
      lines.push(await relay.next());
      relay.send({ jsonrpc: "2.0", method: "notifications/initialized" });
      for (const [, batch] of BATCHES) {
        relay.send(batch);
        lines.push(await relay.next());
      }
      // Over the bound the bridge refuses the batch whole (its error has id null); the relay sends it over HTTP on
      // both legs, and answers each of its requests there, so that none waits for ever.
      relay.send(
        Array.from({ length: MCP_MAX_BATCH_SIZE + 1 }, (_, i) => ({ jsonrpc: "2.0", id: 1000 + i, method: "ping" })),
      );
      for (let i = 0; i < MCP_MAX_BATCH_SIZE + 2; i++) lines.push(await relay.next());
      // A batch of notifications only is answered with nothing: the next line is the ping's.
      relay.send([note, note]);
      relay.send({ jsonrpc: "2.0", id: 99, method: "ping" });
      lines.push(await relay.next());
    } finally {
      expect(await relay.end()).toBe(0);
    }
    return lines;
  }
  const viaOf = (limit: number) => {
    t.bridge.store.activity.flush();
    return t.bridge.store.activity
      .list({ sessionId: s.sessionId, limit: 20 })
      .filter((r) => r.params?.mcp === "read" && r.params?.limit === String(limit))
      .map((r) => r.params?.via);
  };

  beforeAll(async () => {
    t = await startTestBridge();
    s = await t.session({ write: true, name: "batch-project" });
    fs.writeFileSync(path.join(t.projectDir, "notes.txt"), "alpha\nbeta\n");
    env = cliEnv({
      URLBRIDGE_STATE_DIR: t.stateDir,
      URLBRIDGE_CONTROL_PORT: new URL(t.bridge.controlUrl).port,
      URLBRIDGE_OPERATOR_TOKEN: TEST_OPERATOR_TOKEN,
    });
  });
  afterAll(async () => {
    await t.close();
  });

  it("over the bound is refused whole on the socket with the HTTP leg's bytes, and nothing runs", async () => {
    const c = await connectLines(path.join(t.stateDir, "mcp.sock"));
    try {
      c.send({ "urlbridge/hello": { v: 1, bearer: bearerOf(s.m!) } });
      await c.next();
      c.send(INIT);
      await c.next();
      c.send(Array.from({ length: MCP_MAX_BATCH_SIZE + 1 }, (_, i) => read(2000 + i, 3)));
      expect(await c.next()).toBe(
        `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: Batch must not exceed ${MCP_MAX_BATCH_SIZE} messages"},"id":null}`,
      );
      c.send({ jsonrpc: "2.0", id: 9, method: "ping" });
      expect(JSON.parse(await c.next())).toMatchObject({ id: 9, result: {} });
      expect(viaOf(3)).toEqual([]);
    } finally {
      c.close();
    }
  });

  it("is answered over the socket in one line, as over HTTP: same answers, same shape", async () => {
    const overSocket = await exchange();
    expect(viaOf(1)).toEqual(["stdio"]);
    // The bridge keeps listening on the unlinked socket, but no relay can find it: this one relays over HTTP.
    fs.unlinkSync(path.join(t.stateDir, "mcp.sock"));
    const overHttp = await exchange();
    expect(viaOf(1).sort()).toEqual(["stdio", undefined]);

    expect(overSocket).toEqual(overHttp);
    const answers = overSocket.map((line) => JSON.parse(line) as unknown);
    const [, three, one, unknownTool] = answers;
    const [refused, ...unanswered] = answers.slice(4, 4 + MCP_MAX_BATCH_SIZE + 2);
    const ping = answers.at(-1);
    expect(refused).toEqual({
      jsonrpc: "2.0",
      error: { code: -32600, message: `Invalid Request: Batch must not exceed ${MCP_MAX_BATCH_SIZE} messages` },
      id: null,
    });
    expect(unanswered.map((a) => (a as { id: number }).id)).toEqual(
      Array.from({ length: MCP_MAX_BATCH_SIZE + 1 }, (_, i) => 1000 + i),
    );
    expect((three as Array<{ id: number }>).map((a) => a.id)).toEqual([2, 3, 4]);
    expect(three).toMatchObject([
      { result: {} },
      { result: { structuredContent: { ok: true } } },
      { result: { tools: expect.any(Array) } },
    ]);
    expect(one).toMatchObject({ id: 5, result: { structuredContent: { ok: true } } });
    expect((unknownTool as Array<{ id: number }>).map((a) => a.id)).toEqual([6, 7]);
    expect(ping).toMatchObject({ id: 99, result: {} });
  });
});
