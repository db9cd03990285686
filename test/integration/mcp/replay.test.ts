// Replay over MCP (issue 12, Must show): a tools/call with an idempotency key (_meta["urlbridge/idempotencyKey"])
// executes once, also across a bridge restart on the same state dir; without a key every call is its own intent.
// The file is changed behind the bridge's back between calls: a replay leaves that change, a new run overwrites it.
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { IDEMPOTENCY_KEY_META } from "../../../server/mcp/call-tool.js";
import { startTestBridge } from "../../helpers/bridge.js";
import {
  startMcpBridge,
  wrapSession,
  type McpBridge,
  type McpSdk,
  type McpTestClient,
} from "../../helpers/mcp-clients.js";

const open: McpBridge[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((b) => b.close()));
});

async function start(): Promise<McpBridge> {
  const b = await startMcpBridge({ write: true });
  open.push(b);
  return b;
}

/** Stops the bridge and starts a new one on the same state dir; the session's capabilities carry over. */
async function restart(b: McpBridge): Promise<McpBridge> {
  open.splice(open.indexOf(b), 1);
  await b.close();
  const tb = await startTestBridge({}, { stateDir: b.tb.stateDir });
  const next = wrapSession(tb, b.agent);
  open.push(next);
  return next;
}

function write(client: McpTestClient, file: string, content: string, key?: string) {
  return client.callTool({
    name: "write",
    arguments: { path: file, content },
    ...(key ? { _meta: { [IDEMPOTENCY_KEY_META]: key } } : {}),
  });
}

async function readWhole(client: McpTestClient, file: string): Promise<void> {
  const read = await client.callTool({ name: "read", arguments: { path: file } });
  expect(read.isError).toBeFalsy();
}

interface WriteAnswer {
  ok: boolean;
  callId?: string;
  dedupe?: string;
}

const sdks: McpSdk[] = ["v2", "v1"];

describe("tools/call replay", () => {
  it.each(sdks)("the same key executes once, also across a bridge restart (%s client)", async (sdk) => {
    let b = await start();
    const file = path.join(b.tb.projectDir, "keyed.txt");
    const key = `replay-${sdk}-0001`;
    let client = await b.connect("m", { sdk, form: "bearer" });
    const first = await write(client, "keyed.txt", "from the agent\n", key);
    expect(first.isError).toBeFalsy();
    const firstBody = first.structuredContent as unknown as WriteAnswer;
    expect(firstBody.ok).toBe(true);
    expect(firstBody.dedupe).not.toBe("replayed");
    expect(fs.readFileSync(file, "utf8")).toBe("from the agent\n");

    // Someone else changes the file and the agent reads it, so a second run could write: a replay must not.
    fs.writeFileSync(file, "changed by the operator\n");
    await readWhole(client, "keyed.txt");
    const again = await write(client, "keyed.txt", "from the agent\n", key);
    expect((again.structuredContent as unknown as WriteAnswer).dedupe).toBe("replayed");
    expect(fs.readFileSync(file, "utf8")).toBe("changed by the operator\n");

    b = await restart(b);
    client = await b.connect("m", { sdk, form: "path" });
    await readWhole(client, "keyed.txt");
    const afterRestart = await write(client, "keyed.txt", "from the agent\n", key);
    expect(afterRestart.isError).toBeFalsy();
    const replayed = afterRestart.structuredContent as unknown as WriteAnswer;
    expect(replayed.dedupe).toBe("replayed");
    expect(replayed.callId).toBe(firstBody.callId);
    expect(afterRestart.content).toContainEqual(
      expect.objectContaining({ type: "text", text: expect.stringMatching(/^Replayed/) }),
    );
    expect(fs.readFileSync(file, "utf8")).toBe("changed by the operator\n");
  });

  it.each(sdks)("without a key two identical calls execute twice, also across a restart (%s client)", async (sdk) => {
    let b = await start();
    const file = path.join(b.tb.projectDir, "unkeyed.txt");
    let client = await b.connect("m", { sdk, form: "bearer" });
    const first = (await write(client, "unkeyed.txt", "from the agent\n")).structuredContent as unknown as WriteAnswer;
    expect(first.ok).toBe(true);
    fs.writeFileSync(file, "changed by the operator\n");
    // Overwriting a file needs its current content read first (stale_read otherwise), as on the URL transport.
    await readWhole(client, "unkeyed.txt");
    const second = (await write(client, "unkeyed.txt", "from the agent\n")).structuredContent as unknown as WriteAnswer;
    expect(second.ok).toBe(true);
    expect(second.dedupe).not.toBe("replayed");
    expect(second.callId).not.toBe(first.callId);
    expect(fs.readFileSync(file, "utf8")).toBe("from the agent\n");

    fs.writeFileSync(file, "changed by the operator\n");
    b = await restart(b);
    client = await b.connect("m", { sdk, form: "path" });
    await readWhole(client, "unkeyed.txt");
    const third = (await write(client, "unkeyed.txt", "from the agent\n")).structuredContent as unknown as WriteAnswer;
    expect(third.ok).toBe(true);
    expect(third.dedupe).not.toBe("replayed");
    expect(fs.readFileSync(file, "utf8")).toBe("from the agent\n");
  });

  it("the activity log shows both calls of a keyed pair, the second as a replay", async () => {
    const b = await start();
    const client = await b.connect("m", { sdk: "v2", form: "bearer" });
    await write(client, "logged.txt", "x\n", "replay-activity-1");
    await write(client, "logged.txt", "x\n", "replay-activity-1");
    const activity = await b.tb.api<
      Array<{ route: string; tool: string | null; dedupe: string | null; callId: string | null }>
    >("GET", `/api/activity?sessionId=${b.agent.sessionId}`);
    const rows = activity.body.filter((r) => r.route === "/mcp" && r.tool === "write");
    expect(rows).toHaveLength(2);
    expect(rows.map((r) => r.dedupe)).toContain("replayed");
    expect(new Set(rows.map((r) => r.callId)).size).toBe(1);
  });
});
