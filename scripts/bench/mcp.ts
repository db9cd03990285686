// MCP benchmarks: urlbridge's MCP tools over Streamable HTTP (JSON, the endpoint on the data plane) and over stdio
// (`urlbridge mcp --session`, a relay into the same bridge through its MCP socket), each beside
// @modelcontextprotocol/server-filesystem doing the same work over stdio: `read` of a 2 KiB file against
// read_text_file, `edit` against edit_file. `shell` has no twin there; it is reported against our own MCP read over
// HTTP as a floor. The URL transport's `/r` of the same file through Node's fetch runs in the read group too, and so
// does the SDK client over HTTP against a stand-in server that does no work and answers urlbridge's own result bytes
// (mcp-http-floor.mjs): the client's HTTP leg alone. One official client (@modelcontextprotocol/client) drives every
// server; each group is measured interleaved in the same run. The HTTP rows are measured twice in the read group:
// with the client's default fetch (undici) and with a keep-alive node:http fetch (node-http-fetch.ts), each beside
// the do-nothing stand-in under the same fetch. Every group is timed as a client calls (harness.ts measureAsClient):
// one call at a time, in turns, an untimed gap after each; the default fetch is the client the targets are read in.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { createControlPost, makeBenchDir, OPERATOR_TOKEN, spawnServer } from "./bridge.js";
import {
  describeClientMethod,
  measureAsClient,
  measureCpuInterleaved,
  type BenchResult,
  type Stats,
} from "./harness.js";
import { FETCH_CLIENT, firstLine, stopChild } from "./http.js";
import { createNodeHttpFetch, type NodeHttpFetch } from "./node-http-fetch.js";

const READ_RUNS = 200;
const READ_WARMUP = 20;
const EDIT_RUNS = 100;
const SHELL_RUNS = 100;
const SMALL_WARMUP = 5;
/** The CPU pass after the read group: rounds of blocks of sequential calls per target (harness.ts measureCpuInterleaved). */
const CPU_ROUNDS = 10;
const CPU_BLOCK = 30;
/** 32 lines of 63 characters and a newline: 2048 bytes. */
const READ_BYTES = 2048;

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const CLI_ENTRY = path.join(REPO_ROOT, "dist", "server", "cli.js");
const FILESYSTEM_SERVER = path.join(
  REPO_ROOT,
  "node_modules",
  "@modelcontextprotocol",
  "server-filesystem",
  "dist",
  "index.js",
);
const HTTP_FLOOR = path.join(REPO_ROOT, "scripts", "bench", "mcp-http-floor.mjs");
const SOCKET_FLOOR = path.join(REPO_ROOT, "scripts", "bench", "mcp-socket-floor.mjs");

/** measureAsClient answers one Stats per function, in order. */
function three(stats: Stats[]): [Stats, Stats, Stats] {
  const [a, b, c] = stats;
  if (!a || !b || !c) throw new Error("expected three measurements");
  return [a, b, c];
}

function eight(stats: Stats[]): [Stats, Stats, Stats, Stats, Stats, Stats, Stats, Stats] {
  const [a, b, c, d, e, f, g, h] = stats;
  if (!a || !b || !c || !d || !e || !f || !g || !h) throw new Error("expected eight measurements");
  return [a, b, c, d, e, f, g, h];
}

/** urlbridge's own `result` for this tools/call, as bytes: what the HTTP floor answers. */
async function resultBytes(endpoint: string, name: string, args: Record<string, unknown>): Promise<string> {
  const res = await fetch(endpoint, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-06-18",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } }),
  });
  const body = (await res.json()) as { result?: { isError?: boolean } };
  if (!body.result || body.result.isError)
    throw new Error(`the floor's template call failed: ${JSON.stringify(body).slice(0, 300)}`);
  return JSON.stringify(body.result);
}

type Call = (name: string, args: Record<string, unknown>) => Promise<void>;

function callerOf(client: Client, label: string): Call {
  return async (name, args) => {
    const result = await client.callTool({ name, arguments: args });
    if (result.isError) throw new Error(`${label} ${name} failed: ${JSON.stringify(result.content).slice(0, 300)}`);
  };
}

async function connect(
  label: string,
  transport: StreamableHTTPClientTransport | StdioClientTransport,
): Promise<{ client: Client; call: Call }> {
  const client = new Client({ name: `urlbridge-bench-${label}`, version: "0.0.0" });
  await client.connect(transport);
  return { client, call: callerOf(client, label) };
}

/** A file whose one line `value A` / `value B` flips on every edit, so each edit is a real change. */
function flipper(file: string, edit: (from: string, to: string) => Promise<void>): () => Promise<void> {
  fs.writeFileSync(file, "# edited by the bench\nvalue A\nthe end\n");
  let current = "A";
  return async () => {
    const next = current === "A" ? "B" : "A";
    await edit(`value ${current}`, `value ${next}`);
    current = next;
  };
}

/** `urlbridge mcp --session` as a stdio server, relaying to the socket in `stateDir`. */
function stdioRelay(sessionId: string, stateDir: string, control: string): StdioClientTransport {
  return new StdioClientTransport({
    command: process.execPath,
    args: [CLI_ENTRY, "mcp", "--session", sessionId],
    env: {
      PATH: process.env.PATH ?? "",
      URLBRIDGE_STATE_DIR: stateDir,
      URLBRIDGE_CONTROL_PORT: new URL(control).port,
      URLBRIDGE_OPERATOR_TOKEN: OPERATOR_TOKEN,
    },
    stderr: "inherit",
  });
}

export async function runMcpBench(): Promise<BenchResult> {
  if (!fs.existsSync(CLI_ENTRY))
    throw new Error("dist/server is missing: run `npm run build:server` (npm run bench does)");
  const projectDir = makeBenchDir("mcp-project");
  const line = `${"x".repeat(63)}\n`;
  const readText = Array.from(
    { length: READ_BYTES / 64 },
    (_, i) => `${String(i).padStart(2, "0")}${line.slice(2)}`,
  ).join("");
  fs.writeFileSync(path.join(projectDir, "read.txt"), readText);
  if (Buffer.byteLength(readText) !== READ_BYTES) throw new Error("the read fixture is not 2 KiB");

  const stateDir = makeBenchDir("mcp-state");
  const { child, urls } = spawnServer(stateDir, {});
  const load = os.loadavg();
  const clients: Client[] = [];
  let floorChild: ReturnType<typeof spawn> | undefined;
  let socketFloorChild: ReturnType<typeof spawn> | undefined;
  const socketFloorDir = makeBenchDir("mcp-socket-floor");
  const nodeFetches: NodeHttpFetch[] = [];
  try {
    const { control } = await urls;
    const api = createControlPost(control);
    // As root the sandboxed terminal runs as the project's owner (uid 1000 for a root-owned folder): give it the folder.
    const chown = () => {
      if (process.getuid?.() === 0)
        for (const name of [".", ...fs.readdirSync(projectDir)]) fs.chownSync(path.join(projectDir, name), 1000, 1000);
    };
    chown(); // before the project exists: granting write or terminal probes that the agent's uid can write there
    const project = await api("/api/projects", {
      name: "bench",
      root: projectDir,
      permissions: { write: true, terminal: true },
    });
    const session = await api("/api/sessions", { projectId: project.id });
    const { bases } = (await (await fetch(session.initUrl!)).json()) as { bases: { r: string; m: string } };

    const http = await connect("http", new StreamableHTTPClientTransport(new URL(`${bases.m}/mcp`)));
    clients.push(http.client);
    const stdio = await connect("stdio", stdioRelay(session.id!, stateDir, control));
    clients.push(stdio.client);
    const fsServer = await connect(
      "filesystem",
      new StdioClientTransport({ command: process.execPath, args: [FILESYSTEM_SERVER, projectDir], stderr: "inherit" }),
    );
    clients.push(fsServer.client);

    const floorResult = path.join(stateDir, "floor-result.json");
    fs.writeFileSync(floorResult, await resultBytes(`${bases.m}/mcp`, "read", { path: "read.txt" }));
    floorChild = spawn(process.execPath, [HTTP_FLOOR, floorResult], { stdio: ["ignore", "pipe", "inherit"] });
    const floorUrl = new URL(await firstLine(floorChild));
    const floor = await connect("http-floor", new StreamableHTTPClientTransport(floorUrl));
    clients.push(floor.client);
    // The same client and servers through a keep-alive node:http fetch, one agent (connection) per server.
    const nodeFetchOf = () => {
      const nodeFetch = createNodeHttpFetch();
      nodeFetches.push(nodeFetch);
      return nodeFetch.fetch;
    };
    const httpNode = await connect(
      "http-node",
      new StreamableHTTPClientTransport(new URL(`${bases.m}/mcp`), { fetch: nodeFetchOf() }),
    );
    clients.push(httpNode.client);
    const floorNode = await connect(
      "http-floor-node",
      new StreamableHTTPClientTransport(floorUrl, { fetch: nodeFetchOf() }),
    );
    clients.push(floorNode.client);
    // The same relay, its session looked up on the real bridge, its socket the stand-in's (URLBRIDGE_STATE_DIR).
    socketFloorChild = spawn(process.execPath, [SOCKET_FLOOR, socketFloorDir, floorResult], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    await firstLine(socketFloorChild);
    const stdioFloor = await connect("stdio-floor", stdioRelay(session.id!, socketFloorDir, control));
    clients.push(stdioFloor.client);

    const readFile = path.join(projectDir, "read.txt");
    // The URL transport's /r of the same file through Node's fetch (one keep-alive connection, as the read suite).
    const readUrl = `${bases.r}/r?path=read.txt`;
    const getR = async () => {
      const res = await fetch(readUrl);
      const body = (await res.json()) as { ok?: boolean };
      if (body.ok !== true) throw new Error(`/r failed: ${JSON.stringify(body).slice(0, 300)}`);
    };
    const [readHttp, readStdio, readFs, readUrlGet, readFloor, readStdioFloor, readHttpNode, readFloorNode] = eight(
      await measureAsClient(READ_RUNS, READ_WARMUP, [
        () => http.call("read", { path: "read.txt" }),
        () => stdio.call("read", { path: "read.txt" }),
        () => fsServer.call("read_text_file", { path: readFile }),
        getR,
        () => floor.call("read", { path: "read.txt" }),
        () => stdioFloor.call("read", { path: "read.txt" }),
        () => httpNode.call("read", { path: "read.txt" }),
        () => floorNode.call("read", { path: "read.txt" }),
      ]),
    );

    // ping, the one other method a client sends per call: the bridge against the same client's do-nothing floor.
    // A ping with an empty _meta is left to the SDK's exchange (server/mcp/direct-ping.ts): the path a plain one took before.
    const [pingHttp, pingFloor, pingFs, pingSdk] = await measureAsClient(READ_RUNS, READ_WARMUP, [
      () => http.client.ping().then(() => undefined),
      () => floor.client.ping().then(() => undefined),
      () => fsServer.client.ping().then(() => undefined),
      () => http.client.request({ method: "ping", params: { _meta: {} } }).then(() => undefined),
    ]);
    if (!pingHttp || !pingFloor || !pingFs || !pingSdk) throw new Error("expected four ping measurements");

    // Main-thread CPU per read of the process that serves it: the bridge's own work, free of the client's and of
    // how the scheduler overlaps the processes (which the p50 differences above include).
    const readArgs = { path: "read.txt" };
    const [cpuHttp, cpuHttpNode, cpuStdio, cpuFloor] = await measureCpuInterleaved(CPU_ROUNDS, CPU_BLOCK, [
      { pid: child.pid!, fn: () => http.call("read", readArgs) },
      { pid: child.pid!, fn: () => httpNode.call("read", readArgs) },
      { pid: child.pid!, fn: () => stdio.call("read", readArgs) },
      { pid: floorChild.pid!, fn: () => floor.call("read", readArgs) },
    ]);

    const editOf = (call: Call, file: string) => (from: string, to: string) =>
      call("edit", { path: file, oldString: from, newString: to });
    const editHttpFn = flipper(path.join(projectDir, "edit-http.txt"), editOf(http.call, "edit-http.txt"));
    const editStdioFn = flipper(path.join(projectDir, "edit-stdio.txt"), editOf(stdio.call, "edit-stdio.txt"));
    const fsEditFile = path.join(projectDir, "edit-fs.txt");
    const editFsFn = flipper(fsEditFile, (from, to) =>
      fsServer.call("edit_file", { path: fsEditFile, edits: [{ oldText: from, newText: to }] }),
    );
    chown();
    const [editHttp, editStdio, editFs] = three(
      await measureAsClient(EDIT_RUNS, SMALL_WARMUP, [editHttpFn, editStdioFn, editFsFn]),
    );

    const [shellFloor, shellHttp, shellStdio] = three(
      await measureAsClient(SHELL_RUNS, SMALL_WARMUP, [
        () => http.call("read", { path: "read.txt" }),
        () => http.call("shell", { command: "echo bench" }),
        () => stdio.call("shell", { command: "echo bench" }),
      ]),
    );

    const method = (order: string, runs: number, warmup: number) =>
      describeClientMethod({
        client:
          "the official SDK client (@modelcontextprotocol/client) as used by default (its transport's default fetch, Node's global fetch)," +
          ` the rows that say so with a keep-alive node:http fetch instead; \`/r\` by ${FETCH_CLIENT}`,
        order,
        runs,
        warmup,
      });
    const us = (value: number | undefined) => (value === undefined ? "n/a (no schedstat)" : `${value.toFixed(0)} µs`);
    const ms = (s: Stats) => `${s.p50.toFixed(2)} | ${s.p99.toFixed(2)}`;
    const ratio = (s: Stats, base: Stats) => `${(s.p50 / base.p50).toFixed(2)}×`;
    const verdict = (s: Stats, base: Stats, strict: boolean) =>
      (strict ? s.p50 < base.p50 : s.p50 <= base.p50) ? "met" : "**not met**";
    const markdown = [
      "### MCP",
      "",
      `Measured ${new Date().toISOString().slice(0, 16)}Z on ${os.cpus().length} × ${os.cpus()[0]?.model.trim() ?? "unknown CPU"}, Node ${process.version};`,
      `load average ${load.map((l) => l.toFixed(2)).join(" ")} at the start, ${os.loadavg()[0]!.toFixed(2)} at the end.`,
      `The built server in its own process; one official client (@modelcontextprotocol/client) drives urlbridge over`,
      `Streamable HTTP (stateless, JSON answers: \`POST /v0/<cap>/mcp\`) and over stdio (\`urlbridge mcp --session\`, a`,
      `relay that pipes each line to the bridge's MCP socket, one MCP server per connection), and`,
      `@modelcontextprotocol/server-filesystem over stdio on the same folder. The read group also times the same client`,
      `over HTTP, and the same relay over its socket, against stand-ins that do no work and answer urlbridge's own result`,
      `bytes: each transport's leg alone. The HTTP rows and their floor are measured with the client's default fetch`,
      `(undici) and again with a keep-alive node:http fetch (its \`fetch\` option; scripts/bench/node-http-fetch.ts).`,
      `Each group is measured in turns, call by call, in the same run; ratios are p50 against the`,
      `filesystem server doing the same work (read_text_file, edit_file). \`shell\` has no twin there: its floor is`,
      `urlbridge's own MCP \`read\` over HTTP, measured interleaved with it. Every urlbridge call goes through the kernel`,
      `(containment, permissions, activity row); every edit is a journaled intent (fsync of file, folder and journal).`,
      `The read group, timed as a client calls. ${method("urlbridge `read` over HTTP, over stdio, the filesystem server's `read_text_file`, `/r`, the HTTP stand-in, the stdio stand-in, `read` over HTTP with node:http and the stand-in with node:http", READ_RUNS, READ_WARMUP)}`,
      `The ping group: the same, for urlbridge's \`ping\`, the stand-in's, the filesystem server's and urlbridge's through the SDK's exchange (${READ_RUNS} each after ${READ_WARMUP}).`,
      `The edit group: urlbridge \`edit\` over HTTP, over stdio, the filesystem server's \`edit_file\` (${EDIT_RUNS} each after ${SMALL_WARMUP});` +
        ` shell group: urlbridge \`read\` over HTTP, \`shell\` over HTTP, \`shell\` over stdio (${SHELL_RUNS} each after ${SMALL_WARMUP}).`,
      "The targets are read in this method with the client's default fetch.",
      "",
      "| measurement | p50 ms | p99 ms | p50 ratio |",
      "|---|---|---|---|",
      `| filesystem server \`read_text_file\` 2 KiB, stdio (n=${readFs.n}) | ${ms(readFs)} | 1.00× |`,
      `| urlbridge \`read\` 2 KiB, HTTP (n=${readHttp.n}) | ${ms(readHttp)} | ${ratio(readHttp, readFs)} vs filesystem |`,
      `| urlbridge \`read\` 2 KiB, stdio relay (n=${readStdio.n}) | ${ms(readStdio)} | ${ratio(readStdio, readFs)} vs filesystem |`,
      `| urlbridge \`/r\` 2 KiB, URL transport, Node's fetch (n=${readUrlGet.n}) | ${ms(readUrlGet)} | ${ratio(readUrlGet, readFs)} vs filesystem |`,
      `| SDK client over HTTP to a stand-in that does no work, urlbridge's \`read\` answer bytes (n=${readFloor.n}) | ${ms(readFloor)} | ${ratio(readFloor, readFs)} vs filesystem |`,
      `| the stdio relay to a stand-in socket that does no work, the same answer bytes (n=${readStdioFloor.n}) | ${ms(readStdioFloor)} | ${ratio(readStdioFloor, readFs)} vs filesystem |`,
      `| urlbridge \`read\` 2 KiB, HTTP, the client given a keep-alive node:http fetch (n=${readHttpNode.n}) | ${ms(readHttpNode)} | ${ratio(readHttpNode, readFs)} vs filesystem |`,
      `| the same client and node:http fetch to the stand-in that does no work (n=${readFloorNode.n}) | ${ms(readFloorNode)} | ${ratio(readFloorNode, readFs)} vs filesystem |`,
      `| SDK client \`ping\` to the stand-in that does no work, HTTP (n=${pingFloor.n}) | ${ms(pingFloor)} | 1.00× |`,
      `| urlbridge \`ping\`, HTTP (n=${pingHttp.n}) | ${ms(pingHttp)} | ${ratio(pingHttp, pingFloor)} vs floor |`,
      `| filesystem server \`ping\`, stdio (n=${pingFs.n}) | ${ms(pingFs)} | ${ratio(pingFs, pingFloor)} vs floor |`,
      `| urlbridge \`ping\` with an empty \`_meta\`, through the SDK's exchange, HTTP (n=${pingSdk.n}) | ${ms(pingSdk)} | ${ratio(pingSdk, pingFloor)} vs floor |`,
      `| filesystem server \`edit_file\`, stdio (n=${editFs.n}) | ${ms(editFs)} | 1.00× |`,
      `| urlbridge \`edit\`, HTTP (n=${editHttp.n}) | ${ms(editHttp)} | ${ratio(editHttp, editFs)} vs filesystem |`,
      `| urlbridge \`edit\`, stdio relay (n=${editStdio.n}) | ${ms(editStdio)} | ${ratio(editStdio, editFs)} vs filesystem |`,
      `| urlbridge \`read\` 2 KiB, HTTP (shell floor, n=${shellFloor.n}) | ${ms(shellFloor)} | 1.00× |`,
      `| urlbridge \`shell\` \`echo\`, HTTP (n=${shellHttp.n}) | ${ms(shellHttp)} | ${ratio(shellHttp, shellFloor)} vs floor |`,
      `| urlbridge \`shell\` \`echo\`, stdio relay (n=${shellStdio.n}) | ${ms(shellStdio)} | ${ratio(shellStdio, shellFloor)} vs floor |`,
      "",
      `Targets: MCP \`read\` over HTTP no slower than the filesystem server over stdio, with the client's default fetch: ${verdict(readHttp, readFs, false)}` +
        ` (${ratio(readHttp, readFs)}; its do-nothing floor ${ratio(readFloor, readFs)}); with a keep-alive node:http fetch: ${verdict(readHttpNode, readFs, false)}` +
        ` (${ratio(readHttpNode, readFs)}; its do-nothing floor ${ratio(readFloorNode, readFs)}); over stdio faster: ${verdict(readStdio, readFs, true)} (${ratio(readStdio, readFs)}).`,
      `\`/r\` through Node's fetch no slower than the filesystem server's \`read_text_file\` through the SDK client: ${verdict(readUrlGet, readFs, false)} (${ratio(readUrlGet, readFs)}).`,
      `With no server work behind them, the SDK client's HTTP leg takes ${ratio(readFloor, readFs)} of the filesystem server's whole call and the stdio relay's leg ${ratio(readStdioFloor, readFs)};` +
        ` urlbridge's read is ${ratio(readHttp, readFloor)} of its floor over HTTP and ${ratio(readStdio, readStdioFloor)} over stdio.` +
        ` The bridge's own part over HTTP (p50 above the do-nothing floor under the same fetch): ${(readHttp.p50 - readFloor.p50).toFixed(2)} ms with the default fetch,` +
        ` ${(readHttpNode.p50 - readFloorNode.p50).toFixed(2)} ms with node:http; over stdio ${(readStdio.p50 - readStdioFloor.p50).toFixed(2)} ms.`,
      `The bridge's main-thread CPU per \`read\` (schedstat, ${CPU_ROUNDS} interleaved rounds of ${CPU_BLOCK} calls each back to back, after the read group; CPU time, not latency, so no gap):` +
        ` HTTP with the default fetch ${us(cpuHttp)}, HTTP with node:http ${us(cpuHttpNode)}, the socket (stdio relay) ${us(cpuStdio)};` +
        ` the do-nothing HTTP stand-in's ${us(cpuFloor)}.`,
    ].join("\n");
    return {
      suite: "mcp",
      markdown,
      figures: {
        readHttp,
        readStdio,
        readFs,
        readUrlGet,
        readFloor,
        readStdioFloor,
        readHttpNode,
        readFloorNode,
        editHttp,
        editStdio,
        editFs,
        shellFloor,
        shellHttp,
        shellStdio,
        pingHttp,
        pingFloor,
        pingFs,
        pingSdk,
      },
    };
  } finally {
    for (const client of clients) await client.close().catch(() => undefined);
    for (const nodeFetch of nodeFetches) nodeFetch.close();
    if (floorChild) await stopChild(floorChild);
    if (socketFloorChild) await stopChild(socketFloorChild);
    fs.rmSync(socketFloorDir, { recursive: true, force: true });
    await stopChild(child);
    fs.rmSync(stateDir, { recursive: true, force: true });
    fs.rmSync(projectDir, { recursive: true, force: true });
  }
}
