// Issue 26 item 1: a foreground MCP shell call that outlasts the foreground bound answers a valid `running` result
// with the exact next call, and that call returns the command's stdout and exit code. The bound is shortened (the
// bridge's mcpCallBoundMs option) so a 4 s command outlasts it; over HTTP with both official clients (the v1 client
// validates structuredContent against outputSchema) and through the stdio relay into the bridge's MCP socket.
import { Client as ClientV2 } from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioV2 } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestBridge, TEST_OPERATOR_TOKEN, type AgentSession, type TestBridge } from "../../helpers/bridge.js";
import { connectMcpClient, tokenOfBase, type McpTestClient } from "../../helpers/mcp-clients.js";
import { BIN, cliEnv } from "../cli/run-cli.js";

/** Short enough that the command below outlasts it two or three times. */
const BOUND_MS = 1500;
/** Most follow-up calls the command may need: its 4 s over a 1.5 s bound is three; the rest is slack. */
const MAX_FOLLOW_UPS = 8;
const PROJECT = "bound-project";

type CallResult = Awaited<ReturnType<McpTestClient["callTool"]>>;
type Caller = (params: { name: string; arguments: Record<string, unknown> }) => Promise<CallResult>;

let t: TestBridge;
let s: AgentSession;
const closers: Array<() => Promise<void>> = [];

beforeAll(async () => {
  t = await startTestBridge({}, { mcpCallBoundMs: BOUND_MS });
  s = await t.session({ write: true, terminal: true, name: PROJECT });
});
afterAll(async () => {
  for (const close of closers.splice(0)) await close().catch(() => {});
  await t.close();
});

/** Runs a command that outlasts the bound, then follows `next` until it finishes; returns every answer. */
async function runLong(call: Caller, marker: string): Promise<Array<Record<string, unknown>>> {
  const answers: Array<Record<string, unknown>> = [];
  const first = await call({ name: "shell", arguments: { command: `sleep 4; echo ${marker}` } });
  expect(first.isError, JSON.stringify(first.content)).toBeFalsy();
  answers.push(first.structuredContent as Record<string, unknown>);
  let last = answers[0]!;
  for (let i = 0; last.state === "running" || last.state === "pending"; i++) {
    expect(i).toBeLessThan(MAX_FOLLOW_UPS);
    const next = last.next as { tool: string; arguments: Record<string, unknown> };
    const polled = await call({ name: next.tool, arguments: next.arguments });
    expect(polled.isError, JSON.stringify(polled.content)).toBeFalsy();
    last = polled.structuredContent as Record<string, unknown>;
    answers.push(last);
    // A text-only client reads the command's outcome as the shell call's own text.
    if (last.state === "succeeded")
      expect((polled.content as Array<{ text?: string }>).map((c) => c.text).join("\n")).toMatch(
        new RegExp(`^exit code 0 after \\d+ ms\n${marker}\n`),
      );
  }
  return answers;
}

function expectRunningThenOutput(answers: Array<Record<string, unknown>>, marker: string): void {
  const [first, ...rest] = answers;
  // The bound answered before the command ended: running, with its callId and the exact next call.
  expect(first).toMatchObject({
    ok: true,
    state: "running",
    agentAction: "poll",
    next: { tool: "mutation_result", arguments: { callId: first!.callId } },
  });
  expect(first!.dedupe).toBeUndefined();
  for (const unfinished of rest.slice(0, -1))
    expect(unfinished).toMatchObject({ state: expect.stringMatching(/^(pending|running)$/), next: first!.next });
  expect(rest.at(-1)).toMatchObject({
    ok: true,
    state: "succeeded",
    callId: first!.callId,
    tool: "terminal",
    mode: "foreground",
    exitCode: 0,
    stdout: `${marker}\n`,
  });
}

describe("a foreground shell call longer than the foreground bound", () => {
  it.each(["v1", "v2"] as const)(
    "answers running with next over HTTP (%s client), and next returns stdout and the exit code",
    async (sdk) => {
      const client = await connectMcpClient(t.bridge.dataUrl, tokenOfBase(s.m!), { sdk });
      closers.push(() => client.close());
      const marker = `done-http-${sdk}`;
      expectRunningThenOutput(await runLong((p) => client.callTool(p), marker), marker);
    },
  );

  it("answers the same through the stdio relay into the bridge's MCP socket", async () => {
    const env = cliEnv({
      URLBRIDGE_STATE_DIR: t.stateDir,
      URLBRIDGE_CONTROL_PORT: new URL(t.bridge.controlUrl).port,
      URLBRIDGE_OPERATOR_TOKEN: TEST_OPERATOR_TOKEN,
    });
    const client = new ClientV2({ name: "bound-test", version: "0.0.0" });
    await client.connect(
      new StdioV2({
        command: process.execPath,
        args: [BIN, "mcp", "--session", `${PROJECT}-1`],
        env: env as Record<string, string>,
        stderr: "pipe",
      }),
    );
    closers.push(() => client.close());
    expectRunningThenOutput(
      await runLong((p) => client.callTool(p) as Promise<CallResult>, "done-stdio"),
      "done-stdio",
    );
    t.bridge.store.activity.flush();
    expect(
      t.bridge.store.activity.list({ limit: 50 }).filter((r) => r.params?.mcp === "shell" && r.params?.via === "stdio"),
    ).toHaveLength(1);
  });

  it("keeps a replay's and a join's dedupe through the poll, and never shows a new intent's", async () => {
    const client = await connectMcpClient(t.bridge.dataUrl, tokenOfBase(s.m!), { sdk: "v1" });
    closers.push(() => client.close());
    const _meta = { "urlbridge/idempotencyKey": "bound-key-1" };
    const call = (marker: string) =>
      client.callTool({ name: "shell", arguments: { command: `sleep 2; echo ${marker}` }, _meta });
    // Two identical keyed calls at once: one runs, the other joins it; both answer within the bound.
    const [a, b] = await Promise.all([call("keyed"), call("keyed")]);
    const bodies = [a, b].map((r) => r.structuredContent as Record<string, unknown>);
    expect(bodies.map((x) => x.dedupe ?? "none").sort()).toEqual(["joined", "none"]);
    for (const body of bodies)
      expect(body).toMatchObject({
        state: "running",
        next: { tool: "mutation_result", arguments: { callId: "bound-key-1" } },
      });
    let done = bodies[0]!;
    for (let i = 0; done.state !== "succeeded"; i++) {
      expect(i).toBeLessThan(MAX_FOLLOW_UPS);
      done = (await client.callTool({ name: "mutation_result", arguments: { callId: "bound-key-1" } }))
        .structuredContent as Record<string, unknown>;
    }
    const replayed = await call("keyed");
    expect(replayed.isError).toBeFalsy();
    expect(replayed.structuredContent).toMatchObject({
      ok: true,
      state: "succeeded",
      dedupe: "replayed",
      stdout: "keyed\n",
      exitCode: 0,
    });
  });
});
