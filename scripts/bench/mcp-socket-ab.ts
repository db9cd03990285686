// Two (or more) built bridges side by side over the MCP socket: one raw line client per bridge (no SDK client, no
// relay), the same `read` of a 2 KiB file sent to each in turn, call by call, with a pause between calls as the
// bench's stdio client leaves one, so that load falls on every build alike. Per build: wall p50/p90 per call, the
// bridge's main-thread CPU (schedstat) from the request to its answer, and all its main-thread CPU per call
// (what runs after the answer too). Not a suite of `npm run bench`: a tool for an A/B of two builds.
//   npx tsx scripts/bench/mcp-socket-ab.ts <calls> <gapMs> <dist/server/main.js>...   (WARM=n calls first, default
//   20; FLOOR=1 adds the do-nothing stand-in socket, mcp-socket-floor.mjs, answering the first build's bytes)
// An older build runs from a copy of the tree at that commit with its own dist/ and this checkout's node_modules
// linked in: `git archive <commit> | tar -x -C /tmp/old && ln -s "$PWD/node_modules" /tmp/old/`, then build there.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import { HELLO_KEY, MCP_SOCKET_FILE, SOCKET_PROTOCOL_VERSION } from "../../server/mcp/socket-protocol.js";
import { connectLines, type LineClient } from "../../test/helpers/mcp-socket.js";
import { createControlPost, makeBenchDir, spawnServer } from "./bridge.js";
import { mainThreadCpuNs } from "./harness.js";
import { stopChild } from "./http.js";

const SOCKET_FLOOR = path.join(path.dirname(fileURLToPath(import.meta.url)), "mcp-socket-floor.mjs");
const LEGACY_INIT = {
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "ab", version: "0" } },
};

interface Target {
  label: string;
  child: ChildProcess;
  lines: LineClient;
  dirs: string[];
  wall: number[];
  cpu: number[];
  /** CPU at the start of each measured call: their differences are all the CPU per call. */
  starts: number[];
  first?: string;
}

const cpuOf = (pid: number) => mainThreadCpuNs(pid) ?? Number.NaN;
const percentile = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const read = (id: number) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "read", arguments: { path: "read.txt" } },
});

async function greet(socketFile: string, bearer: string): Promise<LineClient> {
  const lines = await connectLines(socketFile);
  lines.send({ [HELLO_KEY]: { v: SOCKET_PROTOCOL_VERSION, bearer } });
  await lines.next();
  lines.send(LEGACY_INIT);
  await lines.next();
  lines.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  return lines;
}

async function startBridge(entry: string, label: string): Promise<Target> {
  const projectDir = makeBenchDir(`mcp-ab-${label}-project`);
  const line = `${"x".repeat(63)}\n`;
  fs.writeFileSync(
    path.join(projectDir, "read.txt"),
    Array.from({ length: 32 }, (_, i) => `${String(i).padStart(2, "0")}${line.slice(2)}`).join(""),
  );
  const stateDir = makeBenchDir(`mcp-ab-${label}-state`);
  const { child, urls } = spawnServer(stateDir, {}, [], entry);
  const dirs = [projectDir, stateDir];
  try {
    const api = createControlPost((await urls).control);
    const project = await api("/api/projects", {
      name: "ab",
      root: projectDir,
      permissions: { write: true, terminal: false },
    });
    const session = await api("/api/sessions", { projectId: project.id });
    const { bases } = (await (await fetch(session.initUrl!)).json()) as { bases: { m: string } };
    const lines = await greet(path.join(stateDir, MCP_SOCKET_FILE), bases.m.split("/").pop()!);
    return { label, child, lines, dirs, wall: [], cpu: [], starts: [] };
  } catch (error) {
    await stopChild(child);
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

async function startFloor(answer: string): Promise<Target> {
  const dir = makeBenchDir("mcp-ab-floor");
  fs.writeFileSync(path.join(dir, "result.json"), JSON.stringify((JSON.parse(answer) as { result: unknown }).result));
  const child = spawn(process.execPath, [SOCKET_FLOOR, dir, path.join(dir, "result.json")], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise<void>((resolve) => child.stdout!.once("data", () => resolve()));
  return {
    label: "floor",
    child,
    lines: await greet(path.join(dir, MCP_SOCKET_FILE), "none"),
    dirs: [dir],
    wall: [],
    cpu: [],
    starts: [],
  };
}

async function main(): Promise<void> {
  const [callsArg, gapArg, ...entries] = process.argv.slice(2);
  const calls = Number(callsArg);
  const gapMs = Number(gapArg);
  if (!(calls > 1) || !(gapMs >= 0) || entries.length === 0)
    throw new Error("usage: mcp-socket-ab.ts <calls> <gapMs> <dist/server/main.js>...");
  const warm = Number(process.env.WARM ?? 20);
  const targets: Target[] = [];
  try {
    for (const [i, entry] of entries.entries()) targets.push(await startBridge(entry, String.fromCharCode(65 + i)));
    if (process.env.FLOOR) {
      targets[0]!.lines.send(read(1e9));
      targets.push(await startFloor(await targets[0]!.lines.next()));
    }
    let id = 1;
    for (let i = 0; i < warm + calls; i++) {
      // Alternate the order every round, so that no build always follows another.
      for (const t of i % 2 === 0 ? targets : [...targets].reverse()) {
        const pid = t.child.pid!;
        const before = cpuOf(pid);
        const started = process.hrtime.bigint();
        t.lines.send(read(id++));
        const answer = await t.lines.next();
        const ended = process.hrtime.bigint();
        const after = cpuOf(pid);
        if (i === 0) t.first = answer.replace(/"id":\d+}$/, "");
        if (i >= warm) {
          t.wall.push(Number(ended - started) / 1e3);
          t.cpu.push((after - before) / 1e3);
          t.starts.push(before);
        }
        if (gapMs > 0) await sleep(gapMs);
      }
    }
  } finally {
    for (const t of targets) {
      t.lines.close();
      await stopChild(t.child);
      for (const dir of t.dirs) fs.rmSync(dir, { recursive: true, force: true });
    }
  }
  const bridges = targets.filter((t) => t.label !== "floor");
  if (bridges.some((t) => t.first !== bridges[0]!.first))
    process.stdout.write("the builds' answers differ (beyond the id)\n");
  for (const t of targets) {
    const all = (t.starts.at(-1)! - t.starts[0]!) / (t.starts.length - 1) / 1e3;
    const name = t.label === "floor" ? "stand-in socket" : entries[t.label.charCodeAt(0) - 65];
    process.stdout.write(
      `${t.label} ${name}: wall p50 ${percentile(t.wall, 50).toFixed(0)} µs, p90 ${percentile(t.wall, 90).toFixed(0)} µs; CPU to the answer p50 ${percentile(t.cpu, 50).toFixed(0)} µs; all CPU per call ${all.toFixed(0)} µs\n`,
    );
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
