// `urlbridge mcp --session <name>`: the real CLI as a child process relays stdio to a running test bridge;
// the official v2 and v1 clients drive it through their stdio transports. Every case runs twice: through the
// bridge's MCP Unix socket, and over HTTP when the bridge has none (an older bridge; the socket file removed).
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { Client as ClientV2 } from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioV2 } from "@modelcontextprotocol/client/stdio";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as StdioV1 } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestBridge, TEST_OPERATOR_TOKEN, type TestBridge, writeAsAgent } from "../../helpers/bridge.js";
import { BIN, cliEnv, runCli as runRelayCli } from "../cli/run-cli.js";

const PROJECT = "stdio-project";
/** The name the bridge gives the project's first session. */
const SESSION = `${PROJECT}-1`;
const CLIENT_INFO = { name: "urlbridge-stdio-test", version: "0.0.0" };
/** Bounds every wait on a child process. */
const CHILD_TIMEOUT_MS = 20_000;

interface RawRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `urlbridge mcp` with these stdin bytes, then EOF; resolves when it exits (killed past the bound). */
function runRelay(args: string[], env: NodeJS.ProcessEnv, stdin: string | Buffer): Promise<RawRun> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, "mcp", ...args], { env, stdio: ["pipe", "pipe", "pipe"] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (c: Buffer) => out.push(c));
    child.stderr.on("data", (c: Buffer) => err.push(c));
    const timer = setTimeout(() => child.kill("SIGKILL"), CHILD_TIMEOUT_MS);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8") });
    });
    child.stdin.on("error", () => {});
    child.stdin.end(stdin);
  });
}

const jsonLines = (stdout: string) =>
  stdout
    .split("\n")
    .filter((l) => l !== "")
    .map(
      (l) =>
        JSON.parse(l) as { jsonrpc: string; id?: unknown; result?: unknown; error?: { code: number; message: string } },
    );

const textOf = (result: { content?: unknown }) =>
  ((result.content as Array<{ type: string; text?: string }> | undefined) ?? []).map((c) => c.text ?? "").join("\n");

describe.each([
  ["through the bridge's MCP socket", "socket"],
  ["over HTTP when the bridge has no socket", "http"],
] as const)("urlbridge mcp (stdio relay into the running bridge) %s", (_title, leg) => {
  let t: TestBridge;
  /** The URLBRIDGE_* variables that point the CLI at the test bridge, and the whole environment built from them. */
  let vars: Record<string, string>;
  let env: NodeJS.ProcessEnv;
  const closers: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    t = await startTestBridge();
    const socket = path.join(t.stateDir, "mcp.sock");
    expect(fs.statSync(socket).isSocket()).toBe(true);
    // The bridge keeps listening on the unlinked socket, but no relay can find it: every message goes over HTTP.
    if (leg === "http") fs.unlinkSync(socket);
    await t.session({ write: true, terminal: false, name: PROJECT });
    writeAsAgent(path.join(t.projectDir, "notes.txt"), "alpha\nbeta\n");
    vars = {
      URLBRIDGE_STATE_DIR: t.stateDir,
      URLBRIDGE_CONTROL_PORT: new URL(t.bridge.controlUrl).port,
      URLBRIDGE_OPERATOR_TOKEN: TEST_OPERATOR_TOKEN,
    };
    env = cliEnv(vars);
  });
  afterAll(async () => {
    for (const close of closers.splice(0)) await close().catch(() => {});
    await t.close();
  });

  const params = () => ({
    command: process.execPath,
    args: [BIN, "mcp", "--session", SESSION],
    env: env as Record<string, string>,
    stderr: "pipe" as const,
  });

  it("serves the v2 client: handshake, tools/list with schemas, a read, an edit, a failure as isError", async () => {
    const client = new ClientV2(CLIENT_INFO, { versionNegotiation: { mode: "auto" } });
    await client.connect(new StdioV2(params()));
    closers.push(() => client.close());
    // The modern revision: the relay derives MCP-Protocol-Version / Mcp-Method from each request's _meta.
    expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28");

    const { tools } = await client.listTools();
    const names = tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(["read", "edit", "write", "glob", "grep"]));
    const read = tools.find((tool) => tool.name === "read")!;
    expect(read.inputSchema.properties).toHaveProperty("path");
    expect(read.outputSchema).toBeDefined();

    const first = await client.callTool({ name: "read", arguments: { path: "notes.txt" } });
    expect(first.isError).toBeFalsy();
    expect(textOf(first)).toContain("alpha");

    const edited = await client.callTool({
      name: "edit",
      arguments: { path: "notes.txt", oldString: "beta", newString: "gamma" },
    });
    expect(edited.isError).toBeFalsy();
    expect(fs.readFileSync(path.join(t.projectDir, "notes.txt"), "utf8")).toBe("alpha\ngamma\n");

    const missing = await client.callTool({ name: "read", arguments: { path: "no-such-file.txt" } });
    expect(missing.isError).toBe(true);
    expect(JSON.stringify(missing.structuredContent ?? missing.content)).toMatch(/not_found/);
  });

  it(`records its calls in the activity log as MCP ${leg === "socket" ? "with via=stdio" : "without via (HTTP)"}`, async () => {
    const client = new ClientV1(CLIENT_INFO);
    await client.connect(new StdioV1(params()));
    closers.push(() => client.close());
    await client.callTool({ name: "read", arguments: { path: "notes.txt", limit: 1 } });
    t.bridge.store.activity.flush();
    const row = t.bridge.store.activity.list({ limit: 20 }).find((r) => r.params?.limit === "1")!;
    expect(row).toMatchObject({ route: "/mcp", tool: "read", ok: true });
    expect(row.params).toMatchObject({ mcp: "read", path: "notes.txt" });
    expect(row.params?.via).toBe(leg === "socket" ? "stdio" : undefined);
  });

  it("serves the v1 client (2025-era handshake) the same tools", async () => {
    const client = new ClientV1(CLIENT_INFO);
    await client.connect(new StdioV1(params()));
    closers.push(() => client.close());

    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(["read", "edit"]));
    const result = (await client.callTool({ name: "read", arguments: { path: "notes.txt" } })) as {
      content: unknown;
      isError?: boolean;
    };
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toContain("alpha");
    // v1's callTool() checks structuredContent against the outputSchema even when isError is true.
    const refused = (await client.callTool({
      name: "edit",
      arguments: { path: "notes.txt", oldString: "absent", newString: "x" },
    })) as {
      isError?: boolean;
      structuredContent?: unknown;
    };
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toMatchObject({ ok: false, errorCode: "edit_no_match" });
    expect(fs.readFileSync(path.join(t.projectDir, "notes.txt"), "utf8")).toBe("alpha\ngamma\n");
  });

  it("writes nothing but one JSON-RPC message per line, answers no notification, and exits 0 on stdin EOF", async () => {
    const init = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: CLIENT_INFO },
    };
    const lines = [
      JSON.stringify(init),
      JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
      "",
      `${JSON.stringify({ jsonrpc: "2.0", id: "two", method: "tools/list", params: {} })}\r`,
      "this is not json",
      // The last message without its newline is still relayed.
      JSON.stringify({ jsonrpc: "2.0", id: 3, method: "ping" }),
    ];
    const run = await runRelay(["--session", SESSION], env, lines.join("\n"));
    expect(run.code).toBe(0);
    const messages = jsonLines(run.stdout);
    expect(messages.every((m) => m.jsonrpc === "2.0")).toBe(true);
    expect(messages.map((m) => m.id).sort()).toEqual([1, 3, null, "two"].sort());
    expect(messages.find((m) => m.id === 1)?.result).toMatchObject({ protocolVersion: "2025-06-18" });
    expect(messages.find((m) => m.id === null)?.error?.code).toBe(-32700);
    expect(run.stderr).toMatch(/not JSON/);
  });

  it("answers requests whose id is not a string or number with an error for id null, and exits on EOF", async () => {
    const lines = [
      JSON.stringify({ jsonrpc: "2.0", id: null, method: "ping" }),
      JSON.stringify({ jsonrpc: "2.0", id: { not: "an id" }, method: "ping" }),
      JSON.stringify({ jsonrpc: "2.0", id: 3, method: "ping" }),
    ];
    const run = await runRelay(["--session", SESSION], env, `${lines.join("\n")}\n`);
    expect(run.code).toBe(0);
    const messages = jsonLines(run.stdout);
    expect(messages.find((m) => m.id === 3)?.result).toEqual({});
    const nulls = messages.filter((m) => m.id === null);
    expect(nulls.length).toBeGreaterThanOrEqual(2);
    expect(nulls.every((m) => m.error !== undefined)).toBe(true);
  });

  it("answers an oversized message with an error for its id, and relays the next one", async () => {
    const huge = JSON.stringify({
      jsonrpc: "2.0",
      id: 41,
      method: "tools/call",
      params: { name: "write", arguments: { path: "big.txt", content: "x".repeat(9 * 1024 * 1024) } },
    });
    const next = JSON.stringify({ jsonrpc: "2.0", id: 42, method: "ping" });
    const run = await runRelay(["--session", SESSION], env, `${huge}\n${next}\n`);
    expect(run.code).toBe(0);
    const messages = jsonLines(run.stdout);
    expect(messages.find((m) => m.id === 41)?.error).toMatchObject({
      code: -32600,
      message: expect.stringMatching(/too large/),
    });
    expect(messages.find((m) => m.id === 42)).toBeDefined();
    expect(fs.existsSync(path.join(t.projectDir, "big.txt"))).toBe(false);
  });

  it("follows a rotation (the relay asks the control API for the new capability) and refuses a disabled session", async () => {
    const sessionId = (await t.api<Array<{ id: string; name: string }>>("GET", "/api/sessions")).body.find(
      (s) => s.name === SESSION,
    )!.id;
    const client = new ClientV1(CLIENT_INFO);
    await client.connect(new StdioV1(params()));
    closers.push(() => client.close());
    expect((await t.api("POST", `/api/sessions/${sessionId}/rotate`)).status).toBe(200);
    const result = (await client.callTool({ name: "read", arguments: { path: "notes.txt" } })) as {
      content: unknown;
      isError?: boolean;
    };
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toContain("alpha");

    expect((await t.api("POST", `/api/sessions/${sessionId}/disable`)).status).toBe(200);
    try {
      await expect(client.callTool({ name: "read", arguments: { path: "notes.txt" } })).rejects.toThrow(
        /no longer accepts this session's capability/,
      );
      const run = await runRelay(["--session", SESSION], env, "");
      expect(run.code).toBe(1);
      expect(run.stdout).toBe("");
      expect(run.stderr).toMatch(/session "stdio-project-1" is disabled; enable it/);
    } finally {
      expect((await t.api("POST", `/api/sessions/${sessionId}/enable`)).status).toBe(200);
    }
  });

  it("retries every message that was in flight during a rotation, with one refresh", async () => {
    const sessionId = (await t.api<Array<{ id: string; name: string }>>("GET", "/api/sessions")).body.find(
      (s) => s.name === SESSION,
    )!.id;
    const child = spawn(process.execPath, [BIN, "mcp", "--session", SESSION], { env, stdio: ["pipe", "pipe", "pipe"] });
    const timer = setTimeout(() => child.kill("SIGKILL"), CHILD_TIMEOUT_MS);
    let stdout = "";
    const lineCount = () => stdout.split("\n").filter(Boolean).length;
    const waiters: Array<() => void> = [];
    child.stdout.on("data", (c: Buffer) => {
      stdout += c.toString("utf8");
      waiters.splice(0).forEach((wake) => wake());
    });
    child.on("close", () => waiters.splice(0).forEach((wake) => wake()));
    const waitForLines = async (n: number) => {
      while (lineCount() < n && child.exitCode === null) await new Promise<void>((wake) => waiters.push(wake));
    };
    const closed = new Promise<number | null>((resolve) => child.on("close", resolve));
    child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" })}\n`);
    await waitForLines(1);
    expect((await t.api("POST", `/api/sessions/${sessionId}/rotate`)).status).toBe(200);
    // Three requests in one write: all are in flight when the first 404 comes back.
    const burst = [2, 3, 4].map((id) =>
      JSON.stringify({
        jsonrpc: "2.0",
        id,
        method: "tools/call",
        params: { name: "read", arguments: { path: "notes.txt" } },
      }),
    );
    child.stdin.end(`${burst.join("\n")}\n`);
    await waitForLines(4);
    expect(await closed).toBe(0);
    clearTimeout(timer);
    const answers = jsonLines(stdout).filter((m) => m.id !== 1);
    expect(answers.map((m) => m.id).sort()).toEqual([2, 3, 4]);
    expect(answers.every((m) => m.result !== undefined && !(m.result as { isError?: boolean }).isError)).toBe(true);
  });

  it("hands a read-only project's session the read capability: read tools only", async () => {
    const readOnly = await t.session({ write: false, terminal: false, name: "stdio-readonly" });
    const view = (await t.api<{ capability: string; bearer: string }>("GET", `/api/sessions/${readOnly.sessionId}/mcp`))
      .body;
    expect(view.capability).toBe("read");
    expect(`${t.bridge.dataUrl}/v0/${view.bearer}`).toBe(readOnly.r);
    const list = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} });
    const run = await runRelay(["--session", "stdio-readonly-1"], env, `${list}\n`);
    expect(run.code).toBe(0);
    const names = (jsonLines(run.stdout)[0]!.result as { tools: Array<{ name: string }> }).tools.map(
      (tool) => tool.name,
    );
    expect(names).toContain("read");
    expect(names).not.toContain("edit");
    expect(names).not.toContain("write");
  });

  it("session create prints the same MCP snippets as the session's MCP view", async () => {
    const projectId = (await t.api<Array<{ id: string; name: string }>>("GET", "/api/projects")).body.find(
      (p) => p.name === PROJECT,
    )!.id;
    const created = await runRelayCli(["session", "create", projectId, "--name", "snippets"], vars);
    expect(created.code).toBe(0);
    const sessionId = /^Session snippets \((s_\w+)\)/m.exec(created.stdout)![1]!;
    const view = (
      await t.api<{ capability: string; stdioCommand: string[]; snippets: Array<{ title: string; text: string }> }>(
        "GET",
        `/api/sessions/${sessionId}/mcp`,
      )
    ).body;
    expect(view.capability).toBe("mutation");
    // Not the compose appliance (its state dir is /var/lib/urlbridge): the relay runs directly, by absolute paths,
    // finding the bridge through flags rather than the client's environment.
    expect(view.stdioCommand).toEqual([
      process.execPath,
      path.resolve(BIN),
      "mcp",
      "--state-dir",
      t.stateDir,
      "--control-url",
      t.bridge.controlUrl,
      "--session",
      "snippets",
    ]);
    for (const snippet of view.snippets) expect(created.stdout).toContain(`${snippet.title}:\n${snippet.text}`);
    const remote = JSON.parse(view.snippets[0]!.text) as {
      mcp: Record<string, { url: string; headers: { Authorization: string } }>;
    };
    expect(remote.mcp.snippets!.url).toBe(`${t.bridge.dataUrl}/mcp`);
    // The bearer in the snippet opens the endpoint it names.
    const res = await fetch(remote.mcp.snippets!.url, {
      method: "POST",
      headers: {
        authorization: remote.mcp.snippets!.headers.Authorization,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
    });
    expect(res.status).toBe(200);
  });

  it.each([
    [
      ["--session", "nobody"],
      1,
      /urlbridge: no session named or with id "nobody"; see `(URLBRIDGE_STATE_DIR=\S+ )?npx urlbridge session list`/,
    ],
    [[], 2, /"urlbridge mcp" needs --session/],
    [["--session", SESSION, "--json"], 2, /--json does not apply to "urlbridge mcp"/],
  ])("refuses %j on stderr with exit %i and nothing on stdout", async (args, code, pattern) => {
    const run = await runRelay(args, env, "");
    expect(run.code).toBe(code);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(pattern);
  });

  it("says on stderr when the bridge is not running", async () => {
    const run = await runRelay(["--session", SESSION], { ...env, URLBRIDGE_CONTROL_PORT: "1" }, "");
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/cannot reach the control plane/);
  });
});
