// Where an MCP call spends its time inside the bridge: runs the built server with --cpu-prof, sends `calls` raw
// JSON-RPC messages over one keep-alive node:http connection (no SDK client in the way) or over the MCP socket,
// and prints the heaviest functions by self time. Not a suite of `npm run bench`: a tool for finding the next cut.
//   npx tsx scripts/bench/mcp-profile.ts <http-ping|http-read|socket-read> [calls=2000]   (TOP=n rows, NOPROF=1,
//   INCL=name,name: more functions to time inclusively, KEEP=file: keep the .cpuprofile there, INTERVAL=µs: the sampling interval,
//   NODE_ARGS="--flag ...": node options for the bridge)
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { HELLO_KEY, MCP_SOCKET_FILE, SOCKET_PROTOCOL_VERSION } from "../../server/mcp/socket-protocol.js";
import { connectLines } from "../../test/helpers/mcp-socket.js";
import { createControlPost, makeBenchDir, spawnServer } from "./bridge.js";
import { summariseProfile } from "./cpu-profile.js";
import { stopChild } from "./http.js";

const MODES = ["http-ping", "http-read", "socket-read"] as const;
type Mode = (typeof MODES)[number];
const TOP = Number(process.env.TOP ?? 25);
/** Functions whose inclusive time is worth seeing: the MCP path's stages. */
const INCLUSIVE = [
  ...(process.env.INCL ? process.env.INCL.split(",") : []),
  "serve",
  "serveLegacy",
  "createMcpServer",
  "registerTool",
  "connect",
  "handleRequest",
  "toWebRequest",
  "writeResponse",
  "callTool",
  "run",
  "recordCall",
  "handlePostRequest",
  "onLine",
  "send",
  "close",
  "readBoundedBody",
  "fetch",
  "_onrequest",
  "parserOnIncoming",
  "writev",
];

async function main(): Promise<void> {
  const mode = process.argv[2] as Mode;
  if (!MODES.includes(mode)) throw new Error(`mode must be one of ${MODES.join(", ")}`);
  const calls = Number(process.argv[3] ?? 2000);
  const projectDir = makeBenchDir("mcp-profile-project");
  fs.writeFileSync(path.join(projectDir, "read.txt"), `${"x".repeat(63)}\n`.repeat(32));
  const stateDir = makeBenchDir("mcp-profile-state");
  const profDir = makeBenchDir("mcp-profile-cpu");
  // NOPROF=1: the same run without the profiler, for its wall-clock figure alone.
  const { child, urls } = spawnServer(stateDir, {}, [
    ...(process.env.NODE_ARGS ? process.env.NODE_ARGS.split(" ") : []),
    ...(process.env.NOPROF
      ? []
      : [
          "--cpu-prof",
          `--cpu-prof-dir=${profDir}`,
          ...(process.env.INTERVAL ? [`--cpu-prof-interval=${process.env.INTERVAL}`] : []),
        ]),
  ]);
  try {
    const { control } = await urls;
    const api = createControlPost(control);
    const project = await api("/api/projects", {
      name: "profile",
      root: projectDir,
      permissions: { write: false, terminal: false },
    });
    const session = await api("/api/sessions", { projectId: project.id });
    const { bases } = (await (await fetch(session.initUrl!)).json()) as { bases: { r: string } };
    const bearer = bases.r.split("/").pop()!;
    const read = (id: number) => ({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: "read", arguments: { path: "read.txt" } },
    });
    const started = process.hrtime.bigint();
    if (mode === "socket-read") {
      const socket = await connectLines(path.join(stateDir, MCP_SOCKET_FILE));
      const exchange = (message: unknown) => {
        socket.send(message);
        return socket.next();
      };
      await exchange({ [HELLO_KEY]: { v: SOCKET_PROTOCOL_VERSION, bearer } });
      await exchange({
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "profile", version: "0" } },
      });
      socket.send({ jsonrpc: "2.0", method: "notifications/initialized" });
      for (let i = 1; i <= calls; i++) await exchange(read(i));
      socket.close();
    } else {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      const url = new URL(`${bases.r}/mcp`);
      const post = (message: unknown) =>
        new Promise<void>((resolve, reject) => {
          const body = JSON.stringify(message);
          const req = http.request(
            url,
            {
              method: "POST",
              agent,
              headers: {
                "content-type": "application/json",
                accept: "application/json, text/event-stream",
                "mcp-protocol-version": "2025-06-18",
              },
            },
            (res) => {
              res.resume();
              res.on("end", () => resolve());
            },
          );
          req.on("error", reject);
          req.end(body);
        });
      for (let i = 1; i <= calls; i++)
        await post(mode === "http-ping" ? { jsonrpc: "2.0", id: i, method: "ping" } : read(i));
      agent.destroy();
    }
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    process.stdout.write(
      `${mode}: ${calls} calls in ${ms.toFixed(0)} ms, ${(ms / calls).toFixed(3)} ms each (client included)\n`,
    );
  } finally {
    await stopChild(child);
    const file = fs.readdirSync(profDir).find((name) => name.endsWith(".cpuprofile"));
    if (file && process.env.KEEP) fs.copyFileSync(path.join(profDir, file), process.env.KEEP);
    if (file) process.stdout.write(`${summariseProfile(path.join(profDir, file), INCLUSIVE, TOP)}\n`);
    else process.stdout.write("no profile was written (the server did not exit cleanly)\n");
    for (const dir of [stateDir, projectDir, profDir]) fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
