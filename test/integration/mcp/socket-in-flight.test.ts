// The MCP socket's bound on concurrent requests per connection (MCP_SOCKET_MAX_IN_FLIGHT, server/mcp/limits.ts;
// server/mcp/socket-slots.ts): a raw line client sends many slow shell calls at once, on the direct path and the
// SDK's; the bridge never has more than the bound of them in its terminal gate (running plus queued: the gate's
// own snapshot), stops reading the connection meanwhile instead of queuing without end, and answers every one.
// A cancelled call that is still running keeps its slot.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MCP_SOCKET_MAX_IN_FLIGHT } from "../../../server/mcp/limits.js";
import { startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";
import { toolCall as call } from "../../helpers/mcp-direct-cases.js";
import { bearerOf, connectLines, type LineClient } from "../../helpers/mcp-socket.js";

const LEGACY_INIT = {
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "in-flight-test", version: "0" } },
};
/** More calls than the bound and than the terminal gate holds (2 running + 16 queued): without the bound some are refused busy. */
const CALLS = 40;
/** Bounds the wait for all answers. */
const ANSWERS_TIMEOUT_MS = 60_000;

interface Answer {
  id?: unknown;
  result?: { structuredContent?: { ok?: boolean; errorCode?: string } };
}

describe("the MCP socket's bound on concurrent requests per connection", () => {
  let t: TestBridge;
  let s: AgentSession;
  const clients: LineClient[] = [];
  let peak = 0;
  let sampler: NodeJS.Timeout | undefined;

  const connect = async () => {
    const c = await connectLines(path.join(t.stateDir, "mcp.sock"));
    clients.push(c);
    c.send({ "urlbridge/hello": { v: 1, bearer: bearerOf(s.m!) } });
    expect(JSON.parse(await c.next())).toEqual({ "urlbridge/ready": { v: 1 } });
    c.send(LEGACY_INIT);
    await c.next();
    c.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    return c;
  };
  /** The shell calls the bridge holds now: running, or waiting in the gate for a slot. */
  const inGate = () => {
    const snapshot = t.bridge.terminal.gate.snapshot();
    return snapshot.running + snapshot.queued;
  };
  const sample = () => {
    peak = 0;
    sampler = setInterval(() => (peak = Math.max(peak, inGate())), 2);
  };
  const answersOf = async (c: LineClient, count: number) => {
    const deadline = Date.now() + ANSWERS_TIMEOUT_MS;
    const answers: Answer[] = [];
    while (answers.length < count && Date.now() < deadline) answers.push(JSON.parse(await c.next()) as Answer);
    return answers;
  };

  beforeAll(async () => {
    t = await startTestBridge();
    s = await t.session({ write: true, terminal: true, name: "in-flight-project" });
  });
  afterAll(async () => {
    clearInterval(sampler);
    for (const c of clients) c.close();
    await t.close();
  });

  it(`has at most ${MCP_SOCKET_MAX_IN_FLIGHT} calls of one connection in the bridge at once, and answers all ${CALLS}`, async () => {
    const c = await connect();
    sample();
    // Every other call carries an empty _meta, which the direct path leaves to the SDK: both paths are bounded.
    const lines = Array.from({ length: CALLS }, (_, i) =>
      JSON.stringify(call(i + 1, "shell", { command: `sleep 0.2 && touch marker-${i + 1}` }, i % 2 ? {} : undefined)),
    );
    c.sendRaw(`${lines.join("\n")}\n`);
    const answers = await answersOf(c, CALLS);
    clearInterval(sampler);
    expect(answers.map((a) => a.id).sort((a, b) => Number(a) - Number(b))).toEqual(
      Array.from({ length: CALLS }, (_, i) => i + 1),
    );
    expect(
      answers
        .filter((a) => a.result?.structuredContent?.ok !== true)
        .map((a) => a.result?.structuredContent?.errorCode),
    ).toEqual([]);
    for (let i = 1; i <= CALLS; i++) expect(fs.existsSync(path.join(t.projectDir, `marker-${i}`))).toBe(true);
    // The gate runs 2 at once: with the bound the other 14 wait in its queue, and nothing more is read.
    expect(peak).toBeGreaterThan(2);
    expect(peak).toBeLessThanOrEqual(MCP_SOCKET_MAX_IN_FLIGHT);
    // The connection serves on once the bound is no longer reached.
    c.send({ jsonrpc: "2.0", id: 100, method: "ping" });
    expect(JSON.parse(await c.next())).toMatchObject({ id: 100, result: {} });
  }, 90_000);

  it("keeps the slot of a cancelled call until it has finished running", async () => {
    const c = await connect();
    sample();
    // One slot stays free, so the cancellations are read at once (at the bound nothing is read, as at the relay's).
    const first = Array.from({ length: MCP_SOCKET_MAX_IN_FLIGHT - 1 }, (_, i) =>
      call(i + 1, "shell", { command: `sleep 0.2 && touch cancelled-${i + 1}` }, i % 2 ? {} : undefined),
    );
    const cancels = first.map((m) => ({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: m.id, reason: "test" },
    }));
    const more = Array.from({ length: MCP_SOCKET_MAX_IN_FLIGHT }, (_, i) =>
      call(100 + i, "shell", { command: `sleep 0.2 && touch after-${i}` }),
    );
    // The cancellations come once the calls are in the bridge (a cancelled call not yet started never runs).
    c.sendRaw(`${first.map((m) => JSON.stringify(m)).join("\n")}\n`);
    for (let i = 0; i < 500 && inGate() < first.length; i++) await new Promise((r) => setTimeout(r, 5));
    c.sendRaw(`${[...cancels, ...more].map((m) => JSON.stringify(m)).join("\n")}\n`);
    const answers = await answersOf(c, more.length);
    clearInterval(sampler);
    // Only the later calls are answered; the cancelled ones still ran to their end, holding their slots.
    expect(answers.map((a) => a.id).sort((a, b) => Number(a) - Number(b))).toEqual(more.map((m) => m.id));
    expect(answers.every((a) => a.result?.structuredContent?.ok === true)).toBe(true);
    expect(peak).toBeLessThanOrEqual(MCP_SOCKET_MAX_IN_FLIGHT);
    for (let i = 1; i <= first.length; i++) expect(fs.existsSync(path.join(t.projectDir, `cancelled-${i}`))).toBe(true);
  }, 90_000);
});
