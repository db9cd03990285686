// The stdio command the bridge prints (GET /api/sessions/:id/mcp, `urlbridge session create`) starts as printed from
// any folder with no environment at all, as Codex starts stdio servers (it passes none of the user's variables) and
// as Gemini does for *TOKEN* variables: absolute node and bin, the state dir and the control URL as flags, the
// operator token from the state dir's token file. A real bridge with an operator's layout (no URLBRIDGE_OPERATOR_TOKEN).
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startBridge, type Bridge } from "../../../server/bridge.js";
import { loadConfig } from "../../../server/config.js";
import type { SessionMcpView } from "../../../server/control/session-mcp.js";
import { giveToAgent, makeTempDir } from "../../helpers/bridge.js";

let bridge: Bridge;
let view: SessionMcpView;

beforeAll(async () => {
  const stateDir = makeTempDir("printed-state");
  const projectDir = makeTempDir("printed-project");
  fs.writeFileSync(path.join(projectDir, "hello.txt"), "hello from the project\n");
  giveToAgent(projectDir);
  bridge = await startBridge(
    loadConfig({
      HOME: process.env.HOME,
      URLBRIDGE_STATE_DIR: stateDir,
      URLBRIDGE_CONTROL_PORT: "0",
      URLBRIDGE_DATA_PORT: "0",
      URLBRIDGE_LOG_LEVEL: "silent",
      URLBRIDGE_BROWSE_ROOTS: os.tmpdir(),
    }),
  );
  const token = fs.readFileSync(path.join(stateDir, "operator-token"), "utf8").trim();
  const api = async <T>(method: string, route: string, body?: unknown) => {
    const res = await fetch(`${bridge.controlUrl}${route}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return (await res.json()) as T;
  };
  const project = await api<{ id: string }>("POST", "/api/projects", {
    name: "printed",
    root: projectDir,
    permissions: { write: false, terminal: false },
  });
  const session = await api<{ id: string }>("POST", "/api/sessions", { projectId: project.id, name: "printed" });
  view = await api<SessionMcpView>("GET", `/api/sessions/${session.id}/mcp`);
}, 60_000);

afterAll(async () => {
  await bridge?.close();
});

function runPrinted(cwd: string, lines: unknown[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const [command, ...args] = view.stdioCommand;
  return new Promise((resolve) => {
    const child = spawn(command!, args, { cwd, env: {}, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString("utf8")));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString("utf8")));
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(lines.map((line) => `${JSON.stringify(line)}\n`).join(""));
  });
}

describe("the printed stdio command", () => {
  it("names node and the bin by absolute path, and the state dir and control plane by flags", () => {
    const [node, bin, ...rest] = view.stdioCommand;
    expect(path.isAbsolute(node!) && path.isAbsolute(bin!), view.stdioCommand.join(" ")).toBe(true);
    expect(rest).toEqual([
      "mcp",
      "--state-dir",
      expect.any(String),
      "--control-url",
      bridge.controlUrl,
      "--session",
      "printed",
    ]);
  });

  it.each([["/"], [os.tmpdir()]])("serves the session's tools started in %s with an empty environment", async (cwd) => {
    const run = await runPrinted(cwd, [
      {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "printed-test", version: "1" } },
      },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "read", arguments: { path: "hello.txt" } } },
    ]);
    expect(run.code, run.stderr).toBe(0);
    const answers = run.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { id?: number; result?: unknown });
    expect(answers.map((a) => a.id)).toEqual([1, 2]);
    expect(JSON.stringify(answers[1]!.result)).toContain("hello from the project");
  });
});
