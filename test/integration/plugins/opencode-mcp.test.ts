// The OpenCode Control plugin's mixed tools over MCP, through the official v2 client and the bridge's HTTP MCP
// endpoint: one listing per tool and capability (read half on the read capability, the dispatching mutation
// half on the mutation one), each action run in its own half. No OpenCode is needed: the plugin points at a port
// nothing listens on, so every call that gets as far as OpenCode answers opencode_unavailable.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOpenCodePlugin } from "../../../plugins/opencode-control/index.js";
import { startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";
import { connectMcpClient, tokenOfBase, type McpTestClient } from "../../helpers/mcp-clients.js";
import { closedPort } from "../../helpers/closed-port.js";

const structured = (r: Awaited<ReturnType<McpTestClient["callTool"]>>) =>
  r.structuredContent as Record<string, unknown>;

describe("OpenCode Control over MCP", () => {
  let t: TestBridge;
  let s: AgentSession;
  const clients: McpTestClient[] = [];
  const connect = async (base: string) => {
    const c = await connectMcpClient(t.bridge.dataUrl, tokenOfBase(base), { sdk: "v2" });
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    const port = await closedPort();
    t = await startTestBridge(
      {},
      {
        plugins: [
          createOpenCodePlugin({
            url: `http://127.0.0.1:${port}`,
            username: "opencode",
            password: "pw-0123456789",
            allowExisting: true,
            allowNested: false,
            maxWorkers: 8,
          }),
        ],
      },
    );
    s = await t.session({ write: true, terminal: true });
  });
  afterAll(async () => {
    for (const c of clients) await c.close();
    await t.close();
  });

  it("lists each tool once per capability, read-only on the read one", async () => {
    const listed = async (base: string) =>
      (await (await connect(base)).listTools()).tools.filter((tool) => tool.name.startsWith("opencode-control_"));
    const onRead = await listed(s.r);
    const onMutation = await listed(s.m!);
    const names = [
      "opencode-control_opencode_info",
      "opencode-control_opencode_session",
      "opencode-control_opencode_worker",
      "opencode-control_opencode_request",
    ];
    expect(onRead.map((tool) => tool.name)).toEqual(names);
    expect(onMutation.map((tool) => tool.name)).toEqual(names);
    expect(onRead.find((tool) => tool.name.endsWith("_opencode_worker"))!.annotations).toMatchObject({
      readOnlyHint: true,
    });
    // Not read-only on the mutation capability: readOnlyHint false is MCP's default, so it is left out (listed-tool.ts).
    const mutationWorker = onMutation.find((tool) => tool.name.endsWith("_opencode_worker"))!;
    expect(mutationWorker.annotations?.readOnlyHint ?? false).toBe(false);
  });

  it("runs read actions on both capabilities and mutation actions only on the mutation one", async () => {
    const reader = await connect(s.r);
    const writer = await connect(s.m!);
    const worker = "opencode-control_opencode_worker";
    expect(structured(await reader.callTool({ name: worker, arguments: { action: "list" } }))).toMatchObject({
      ok: false,
      errorCode: "opencode_unavailable",
    });
    expect(structured(await writer.callTool({ name: worker, arguments: { action: "list" } }))).toMatchObject({
      ok: false,
      errorCode: "opencode_unavailable",
    });
    expect(
      structured(await reader.callTool({ name: worker, arguments: { action: "start", prompt: "x" } })),
    ).toMatchObject({ ok: false, errorCode: "wrong_capability_base" });
    // The mutation half ran it (and failed at OpenCode, which is not running).
    expect(
      structured(await writer.callTool({ name: worker, arguments: { action: "start", prompt: "x" } })),
    ).toMatchObject({ ok: false, errorCode: "opencode_unavailable" });
    const status = structured(
      await reader.callTool({ name: "opencode-control_opencode_info", arguments: { action: "status" } }),
    );
    expect(status).toMatchObject({ ok: true, state: "not-running" });
  });
});
