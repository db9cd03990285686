// The stdio relay goes back to the bridge's MCP socket after the bridge restarted under it (server/cli/
// mcp-socket-route.ts). A real bridge process, the real relay, the official clients of both eras: a call over the
// socket, the bridge stopped and started again on the same state dir and ports, the next call over HTTP (it never
// waits for the socket), and soon every call over the socket again. The honest observable is the bridge's activity
// record: via "stdio" for a call that came through the socket, none for one over HTTP.
import fs from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Client as ClientV2 } from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioV2 } from "@modelcontextprotocol/client/stdio";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as StdioV1 } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterEach, describe, expect, it } from "vitest";
import { giveToAgent, makeTempDir, TEST_OPERATOR_TOKEN, makeProjectDir } from "../../helpers/bridge.js";
import { controlApi as api, killServerProcesses, startServerProcess } from "../../helpers/server-process.js";
import { startRelay } from "../../helpers/relay-process.js";
import { BIN, cliEnv } from "../cli/run-cli.js";

const CLIENT_INFO = { name: "reopen-test", version: "0" };
/** Calls made after the restart until one comes over the socket again (each a short wait apart). */
const MAX_CALLS_AFTER_RESTART = 40;
const CALL_GAP_MS = 100;

afterEach(killServerProcesses);

interface CallResult {
  isError?: boolean;
  content: Array<{ type: string; text?: string }>;
}

type AnyClient = {
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
  close(): Promise<void>;
};

const connectors: Array<[string, (env: Record<string, string>) => Promise<AnyClient>]> = [
  [
    "the v1 client (2025-era handshake, replayed on the new connection)",
    async (env) => {
      const client = new ClientV1(CLIENT_INFO);
      await client.connect(
        new StdioV1({ command: process.execPath, args: [BIN, "mcp", "--session", "reopen-1"], env, stderr: "pipe" }),
      );
      return client;
    },
  ],
  [
    "the v2 client",
    async (env) => {
      const client = new ClientV2(CLIENT_INFO, { versionNegotiation: { mode: "auto" } });
      await client.connect(
        new StdioV2({ command: process.execPath, args: [BIN, "mcp", "--session", "reopen-1"], env, stderr: "pipe" }),
      );
      return client;
    },
  ],
];

/** A bridge process with one session on a project holding notes.txt, and the relay's environment. */
async function startBridgeWithSession() {
  const stateDir = makeTempDir("reopen-state");
  const root = makeProjectDir("reopen-project");
  fs.writeFileSync(path.join(root, "notes.txt"), "alpha\nbeta\n");
  giveToAgent(root);
  const first = await startServerProcess({ stateDir });
  const project = await api<{ id: string }>(first, "POST", "/api/projects", {
    name: "reopen",
    root,
    permissions: { write: true, terminal: false },
  });
  const session = await api<{ id: string }>(first, "POST", "/api/sessions", { projectId: project.id });
  const ports = {
    URLBRIDGE_CONTROL_PORT: new URL(first.controlUrl).port,
    URLBRIDGE_DATA_PORT: new URL(first.dataUrl).port,
  };
  const env = cliEnv({
    URLBRIDGE_STATE_DIR: stateDir,
    URLBRIDGE_CONTROL_PORT: ports.URLBRIDGE_CONTROL_PORT,
    URLBRIDGE_OPERATOR_TOKEN: TEST_OPERATOR_TOKEN,
  }) as Record<string, string>;
  let server = first;
  return {
    root,
    env,
    /** Stops the bridge (SIGTERM, as `docker compose restart` does) and starts it again on the same state dir and ports. */
    async restart() {
      server.child.kill("SIGTERM");
      expect(await server.exited).toBe(0);
      server = await startServerProcess({ stateDir, env: ports });
    },
    /** How the bridge recorded the read with this limit: "stdio" over the socket, undefined over HTTP. */
    async viaOf(limit: number) {
      const rows = await api<Array<{ params: Record<string, string> | null }>>(
        server,
        "GET",
        `/api/activity?sessionId=${session.id}&limit=500`,
      );
      const row = rows.find((r) => r.params?.mcp === "read" && r.params.limit === String(limit));
      expect(row).toBeDefined();
      return row!.params!.via;
    },
  };
}

/** Reads with limits from `from` on, a short wait apart, until one is recorded over the socket; its limit. */
async function readUntilOverSocket(
  read: (limit: number) => Promise<void>,
  viaOf: (limit: number) => Promise<string | undefined>,
  from: number,
) {
  for (let limit = from; limit < from + MAX_CALLS_AFTER_RESTART; limit++) {
    await sleep(CALL_GAP_MS);
    await read(limit);
    if ((await viaOf(limit)) === "stdio") return limit;
  }
  return undefined;
}

describe.each(connectors)("the stdio relay after a bridge restart, with %s", (_name, connect) => {
  it("goes on over HTTP at once and back to the socket soon after", { timeout: 120_000 }, async () => {
    const bridge = await startBridgeWithSession();
    const client = await connect(bridge.env);
    const read = async (limit: number) => {
      const result = (await client.callTool({ name: "read", arguments: { path: "notes.txt", limit } })) as CallResult;
      expect(result.isError).toBeFalsy();
      expect(result.content.map((c) => c.text ?? "").join("\n")).toContain("alpha");
    };
    try {
      await read(1);
      expect(await bridge.viaOf(1)).toBe("stdio");
      await bridge.restart();
      // The first call after the loss goes over HTTP and starts the attempt; it never waits for it.
      await read(2);
      expect(await bridge.viaOf(2)).toBeUndefined();
      expect(await readUntilOverSocket(read, bridge.viaOf, 3)).toBeDefined();
      // And it stays there; a mutation works on the new connection too.
      await read(100);
      expect(await bridge.viaOf(100)).toBe("stdio");
      const edit = (await client.callTool({
        name: "edit",
        arguments: { path: "notes.txt", oldString: "beta", newString: "gamma" },
      })) as CallResult;
      expect(edit.isError).toBeFalsy();
      expect(fs.readFileSync(path.join(bridge.root, "notes.txt"), "utf8")).toBe("alpha\ngamma\n");
    } finally {
      await client.close();
    }
  });
});

describe("the stdio relay's new socket connection after a restart", () => {
  it(
    "serves the era the client negotiated: a 2025-era batch is still answered in one line",
    { timeout: 120_000 },
    async () => {
      const bridge = await startBridgeWithSession();
      const relay = startRelay("reopen-1", bridge.env);
      let id = 10;
      const read = async (limit: number) => {
        relay.send({
          jsonrpc: "2.0",
          id: ++id,
          method: "tools/call",
          params: { name: "read", arguments: { path: "notes.txt", limit } },
        });
        expect(JSON.parse(await relay.next())).toMatchObject({ id, result: { structuredContent: { ok: true } } });
      };
      try {
        relay.send({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: CLIENT_INFO },
        });
        expect(JSON.parse(await relay.next())).toMatchObject({ id: 1, result: { protocolVersion: "2025-03-26" } });
        relay.send({ jsonrpc: "2.0", method: "notifications/initialized" });
        await read(1);
        await bridge.restart();
        expect(await readUntilOverSocket(read, bridge.viaOf, 2)).toBeDefined();
        // The client never sent initialize to this connection: the relay replayed its own, so the era holds.
        relay.send([
          { jsonrpc: "2.0", id: 2, method: "ping" },
          { jsonrpc: "2.0", id: 3, method: "ping" },
        ]);
        expect(JSON.parse(await relay.next())).toEqual([
          { jsonrpc: "2.0", id: 2, result: {} },
          { jsonrpc: "2.0", id: 3, result: {} },
        ]);
        // The replayed initialize's answer was the relay's own: the client saw only its answers.
      } finally {
        expect(await relay.end()).toBe(0);
      }
    },
  );
});
