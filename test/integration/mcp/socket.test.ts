// The bridge's MCP Unix socket (server/mcp/socket-*.ts) spoken to directly, line by line, as the stdio relay does:
// who may connect, the hello, JSON-RPC on one server per connection, a capability checked on every line
// (refused unrun after a rotation, moved to HTTP after a change of the tool list), and the size limit.
// Then the real relay: a permission change while a client is connected lists the new tools.
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as StdioV1 } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MCP_MAX_BODY_BYTES } from "../../../server/mcp/limits.js";
import {
  makeTempDir,
  startTestBridge,
  TEST_OPERATOR_TOKEN,
  type AgentSession,
  type TestBridge,
  writeAsAgent,
} from "../../helpers/bridge.js";
import { BIN, cliEnv } from "../cli/run-cli.js";
import { bearerOf, connectLines, LINE_TIMEOUT_MS, type LineClient } from "../../helpers/mcp-socket.js";

const LEGACY_INIT = {
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "socket-test", version: "0" } },
};

const readCall = (id: number, file: string) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "read", arguments: { path: file } },
});

describe("the MCP socket", () => {
  let t: TestBridge;
  let s: AgentSession;
  let socketFile: string;
  const clients: LineClient[] = [];
  const open = async () => {
    const c = await connectLines(socketFile);
    clients.push(c);
    return c;
  };
  const hello = async (bearer: string) => {
    const c = await open();
    c.send({ "urlbridge/hello": { v: 1, bearer } });
    return c;
  };

  beforeAll(async () => {
    t = await startTestBridge();
    s = await t.session({ write: true, name: "socket-project" });
    writeAsAgent(path.join(t.projectDir, "notes.txt"), "alpha\nbeta\n");
    socketFile = path.join(t.stateDir, "mcp.sock");
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await t.close();
  });

  it("is a socket only the bridge's user can open, in a state dir only that user can enter", () => {
    expect(fs.lstatSync(socketFile).isSocket()).toBe(true);
    expect(fs.statSync(socketFile).mode & 0o777).toBe(0o600);
    expect(fs.statSync(t.stateDir).mode & 0o077).toBe(0);
  });

  it.each([
    ["an unknown capability", { "urlbridge/hello": { v: 1, bearer: "Zz9Zz9Zz" } }],
    ["a malformed capability", { "urlbridge/hello": { v: 1, bearer: "../../etc" } }],
    ["no hello at all", { jsonrpc: "2.0", id: 1, method: "ping" }],
  ])("answers %s with unauthorized and closes", async (_name, first) => {
    const c = await open();
    c.send(first);
    expect(JSON.parse(await c.next())).toEqual({ "urlbridge/unauthorized": {} });
    await c.ended;
  });

  it("serves JSON-RPC lines on one server after the hello, and records calls with via=stdio", async () => {
    const c = await hello(bearerOf(s.m!));
    expect(JSON.parse(await c.next())).toEqual({ "urlbridge/ready": { v: 1 } });
    c.send(LEGACY_INIT);
    expect(JSON.parse(await c.next())).toMatchObject({
      id: 0,
      result: { protocolVersion: "2025-06-18", serverInfo: { name: "urlbridge" } },
    });
    c.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    c.send(readCall(1, "notes.txt"));
    const answer = JSON.parse(await c.next()) as {
      id: number;
      result: { structuredContent: { ok: boolean }; content: Array<{ text: string }> };
    };
    expect(answer.id).toBe(1);
    expect(answer.result.structuredContent.ok).toBe(true);
    expect(answer.result.content.at(-1)!.text).toContain("alpha");
    t.bridge.store.activity.flush();
    const row = t.bridge.store.activity
      .list({ sessionId: s.sessionId, limit: 5 })
      .find((r) => r.params?.mcp === "read")!;
    expect(row).toMatchObject({ route: "/mcp", tool: "read", ok: true });
    expect(row.params).toMatchObject({ via: "stdio", path: "notes.txt" });
  });

  it("answers a line that is not JSON and one too large with errors, and keeps serving", async () => {
    const c = await hello(bearerOf(s.m!));
    await c.next();
    c.sendRaw("this is not json\n");
    expect(JSON.parse(await c.next())).toMatchObject({ id: null, error: { code: -32700 } });
    const big = JSON.stringify({
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: { name: "write", arguments: { path: "big.txt", content: "x".repeat(MCP_MAX_BODY_BYTES) } },
    });
    c.sendRaw(`${big}\n`);
    expect(JSON.parse(await c.next())).toMatchObject({
      id: 7,
      error: { code: -32000, message: expect.stringMatching(/larger than 1048576 bytes/) },
    });
    expect(fs.existsSync(path.join(t.projectDir, "big.txt"))).toBe(false);
    c.send({ jsonrpc: "2.0", id: 8, method: "ping" });
    expect(JSON.parse(await c.next())).toMatchObject({ id: 8, result: {} });
  });

  it("refuses a line unrun once the capability rotated, and serves it again after a bearer line with the new one", async () => {
    const session = await t.session({ write: true, name: "socket-rotate", root: t.projectDir });
    const c = await hello(bearerOf(session.m!));
    await c.next();
    c.send(LEGACY_INIT);
    await c.next();
    expect((await t.api("POST", `/api/sessions/${session.sessionId}/rotate`)).status).toBe(200);
    const write = {
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "write", arguments: { path: "after-rotate.txt", content: "x\n" } },
    };
    c.send(write);
    expect(JSON.parse(await c.next())).toEqual({ "urlbridge/refused": { epoch: 0, line: JSON.stringify(write) } });
    expect(fs.existsSync(path.join(t.projectDir, "after-rotate.txt"))).toBe(false);
    const view = (await t.api<{ bearer: string }>("GET", `/api/sessions/${session.sessionId}/mcp`)).body;
    c.send({ "urlbridge/bearer": view.bearer });
    c.send(write);
    expect(JSON.parse(await c.next())).toMatchObject({ id: 2, result: { structuredContent: { ok: true } } });
    expect(fs.readFileSync(path.join(t.projectDir, "after-rotate.txt"), "utf8")).toBe("x\n");
  });

  it("moves a line to HTTP unrun once the capability's tool list changed (a permission turned off)", async () => {
    const session = await t.session({ write: true, terminal: true, name: "socket-moved", root: t.projectDir });
    const c = await hello(bearerOf(session.m!));
    await c.next();
    const patched = await t.api("PATCH", `/api/projects/${session.projectId}`, { permissions: { terminal: false } });
    expect(patched.status).toBe(200);
    const view = (await t.api<{ bearer: string }>("GET", `/api/sessions/${session.sessionId}/mcp`)).body;
    c.send({ "urlbridge/bearer": view.bearer });
    const shell = {
      jsonrpc: "2.0",
      id: 3,
      method: "tools/call",
      params: { name: "shell", arguments: { command: "touch moved.txt" } },
    };
    c.send(shell);
    expect(JSON.parse(await c.next())).toEqual({ "urlbridge/moved": { line: JSON.stringify(shell) } });
    // Every later line too: the relay sends them over HTTP, where each POST is listed afresh.
    c.send({ jsonrpc: "2.0", id: 4, method: "ping" });
    expect(JSON.parse(await c.next())).toEqual({
      "urlbridge/moved": { line: JSON.stringify({ jsonrpc: "2.0", id: 4, method: "ping" }) },
    });
    expect(fs.existsSync(path.join(t.projectDir, "moved.txt"))).toBe(false);
  });

  it("through the real relay: a client connected while the project loses a permission lists the new tools", async () => {
    const session = await t.session({ write: true, terminal: true, name: "relay-moved", root: t.projectDir });
    const env = cliEnv({
      URLBRIDGE_STATE_DIR: t.stateDir,
      URLBRIDGE_CONTROL_PORT: new URL(t.bridge.controlUrl).port,
      URLBRIDGE_OPERATOR_TOKEN: TEST_OPERATOR_TOKEN,
    });
    const client = new ClientV1({ name: "socket-test", version: "0" });
    await client.connect(
      new StdioV1({
        command: process.execPath,
        args: [BIN, "mcp", "--session", "relay-moved-1"],
        env: env as Record<string, string>,
        stderr: "pipe",
      }),
    );
    try {
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain("shell");
      await client.callTool({ name: "read", arguments: { path: "notes.txt", limit: 1 } });
      expect(
        (await t.api("PATCH", `/api/projects/${session.projectId}`, { permissions: { terminal: false } })).status,
      ).toBe(200);
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      expect(names).not.toContain("shell");
      expect(names).toContain("edit");
      const read = (await client.callTool({ name: "read", arguments: { path: "notes.txt", limit: 2 } })) as {
        isError?: boolean;
      };
      expect(read.isError).toBeFalsy();
      // The first read came over the socket, the one after the change over HTTP.
      t.bridge.store.activity.flush();
      const rows = t.bridge.store.activity
        .list({ sessionId: session.sessionId, limit: 10 })
        .filter((r) => r.params?.mcp === "read");
      expect(rows.find((r) => r.params?.limit === "1")?.params?.via).toBe("stdio");
      expect(rows.find((r) => r.params?.limit === "2")?.params?.via).toBeUndefined();
    } finally {
      await client.close();
    }
  });

  it("through the real relay: goes on over HTTP once the bridge restarted under it (the socket connection lost)", async () => {
    const first = await startTestBridge();
    await first.session({ write: true, name: "restart" });
    writeAsAgent(path.join(first.projectDir, "notes.txt"), "alpha\n");
    const port = (url: string) => new URL(url).port;
    const ports = {
      URLBRIDGE_CONTROL_PORT: port(first.bridge.controlUrl),
      URLBRIDGE_DATA_PORT: port(first.bridge.dataUrl),
    };
    const env = cliEnv({
      URLBRIDGE_STATE_DIR: first.stateDir,
      URLBRIDGE_CONTROL_PORT: ports.URLBRIDGE_CONTROL_PORT,
      URLBRIDGE_OPERATOR_TOKEN: TEST_OPERATOR_TOKEN,
    });
    const client = new ClientV1({ name: "socket-test", version: "0" });
    await client.connect(
      new StdioV1({
        command: process.execPath,
        args: [BIN, "mcp", "--session", "restart-1"],
        env: env as Record<string, string>,
        stderr: "pipe",
      }),
    );
    let second: TestBridge | undefined;
    try {
      const before = (await client.callTool({ name: "read", arguments: { path: "notes.txt", limit: 1 } })) as {
        isError?: boolean;
      };
      expect(before.isError).toBeFalsy();
      await first.close();
      second = await startTestBridge(ports, { stateDir: first.stateDir });
      const after = (await client.callTool({ name: "read", arguments: { path: "notes.txt", limit: 2 } })) as {
        isError?: boolean;
        content: Array<{ text?: string }>;
      };
      expect(after.isError).toBeFalsy();
      expect(after.content.map((c) => c.text).join("\n")).toContain("alpha");
      second.bridge.store.activity.flush();
      const row = second.bridge.store.activity
        .list({ limit: 10 })
        .find((r) => r.params?.mcp === "read" && r.params?.limit === "2")!;
      expect(row.params?.via).toBeUndefined();
    } finally {
      await client.close();
      await second?.close();
    }
  });

  it("through the real relay: a cancelled call gets no answer and holds nothing (the relay exits on EOF)", async () => {
    await t.session({ write: true, terminal: true, name: "relay-cancel", root: t.projectDir });
    const env = cliEnv({
      URLBRIDGE_STATE_DIR: t.stateDir,
      URLBRIDGE_CONTROL_PORT: new URL(t.bridge.controlUrl).port,
      URLBRIDGE_OPERATOR_TOKEN: TEST_OPERATOR_TOKEN,
    });
    const child = spawn(process.execPath, [BIN, "mcp", "--session", "relay-cancel-1"], {
      env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), LINE_TIMEOUT_MS);
    let stdout = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString("utf8")));
    const closed = new Promise<number | null>((resolve) => child.on("close", resolve));
    const send = (m: unknown) => child.stdin.write(`${JSON.stringify(m)}\n`);
    send(LEGACY_INIT);
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "shell", arguments: { command: "sleep 3" } } });
    // Once the command runs, cancel it; then one more request, and EOF.
    for (let i = 0; i < 200 && t.bridge.terminal.gate.snapshot().running === 0; i++)
      await new Promise((r) => setTimeout(r, 10));
    send({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: 1, reason: "the user stopped it" },
    });
    send({ jsonrpc: "2.0", id: 2, method: "ping" });
    child.stdin.end();
    expect(await closed).toBe(0);
    clearTimeout(timer);
    const ids = stdout
      .split("\n")
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { id?: unknown }).id);
    expect(ids).toContain(2);
    expect(ids).not.toContain(1);
  });

  it("is removed when the bridge stops", async () => {
    const other = await startTestBridge();
    const file = path.join(other.stateDir, "mcp.sock");
    expect(fs.lstatSync(file).isSocket()).toBe(true);
    await other.close();
    expect(fs.existsSync(file)).toBe(false);
  });
});

/** A process listening on `file`, resolved once it listens; SIGKILL leaves the socket file behind, as a crash does. */
function listenInChild(file: string) {
  const child = spawn(
    process.execPath,
    [
      "-e",
      `require("net").createServer((s) => { s.on("error", () => {}); s.end("child\\n"); }).listen(${JSON.stringify(file)}, () => console.log("up"))`,
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const up = new Promise<void>((resolve, reject) => {
    child.stdout.once("data", () => resolve());
    child.once("exit", (code) => reject(new Error(`the listener exited (${code})`)));
  });
  return { child, up, exited };
}

const firstLineFrom = async (file: string) => {
  const c = await connectLines(file);
  try {
    return await c.next();
  } finally {
    c.close();
  }
};

describe("the MCP socket at start-up", () => {
  it("replaces the socket file a killed bridge left behind", async () => {
    const stateDir = makeTempDir("stale-socket");
    const file = path.join(stateDir, "mcp.sock");
    const stale = listenInChild(file);
    await stale.up;
    stale.child.kill("SIGKILL");
    await stale.exited;
    expect(fs.lstatSync(file).isSocket()).toBe(true);
    const t = await startTestBridge({}, { stateDir });
    try {
      const s = await t.session({ name: "after-crash" });
      const c = await connectLines(file);
      c.send({ "urlbridge/hello": { v: 1, bearer: bearerOf(s.r) } });
      expect(JSON.parse(await c.next())).toEqual({ "urlbridge/ready": { v: 1 } });
      c.close();
    } finally {
      await t.close();
    }
  });

  it("leaves a socket another live process answers on alone", async () => {
    const stateDir = makeTempDir("live-socket");
    const file = path.join(stateDir, "mcp.sock");
    const live = listenInChild(file);
    await live.up;
    const t = await startTestBridge({}, { stateDir });
    try {
      expect(await firstLineFrom(file)).toBe("child");
    } finally {
      await t.close();
      live.child.kill("SIGKILL");
      await live.exited;
    }
    // The bridge's close removed nothing that was not its own.
    expect(fs.lstatSync(file).isSocket()).toBe(true);
  });

  it("leaves a path that is not a socket alone", async () => {
    const stateDir = makeTempDir("file-socket");
    const file = path.join(stateDir, "mcp.sock");
    writeAsAgent(file, "not a socket\n");
    const t = await startTestBridge({}, { stateDir });
    await t.close();
    expect(fs.readFileSync(file, "utf8")).toBe("not a socket\n");
  });
});
