// server/mutation/terminal/terminal-container.ts (a ContainerTerminal) against the real Docker engine, called directly (terminal-container.test.ts
// drives the same code through a bridge's /x): result shapes, leftovers, bg=1 start-up and stop through the
// terminal's process registry, and the lifecycle hooks the registry calls.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Dockerode from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../server/config.js";
import type { ContainerTerminal } from "../../server/mutation/terminal/terminal-container.js";
import { createTerminalState } from "../../server/mutation/terminal/terminal-state.js";
import { LABEL_INSTANCE } from "../../server/sandbox/container/spec.js";
import { createSandboxProbe, eventually } from "./support/sandbox-probe.js";

const INSTANCE = `e2e-module-${process.pid}`;
const AGENT_UID = 1000;
const docker = new Dockerode();
const shutdown = new AbortController();
let base: string;
/** The terminal state a container-mode bridge would own: its registry and its container runner. */
const terminal = createTerminalState({
  container: loadConfig({ URLBRIDGE_SANDBOX: "container", URLBRIDGE_SANDBOX_INSTANCE: INSTANCE }),
});
const container = terminal.container as ContainerTerminal;
const terminalProcesses = terminal.processes;

function makeProject(name: string): string {
  const root = path.join(base, name);
  fs.mkdirSync(root);
  fs.chownSync(root, AGENT_UID, AGENT_UID);
  return root;
}

const { containersOf, processesIn } = createSandboxProbe(docker, INSTANCE);

beforeAll(async () => {
  await docker.ping();
  base = fs.mkdtempSync(path.join(os.tmpdir(), "urlbridge-terminal-container-"));
  expect(await container.removeLeftovers()).toBeUndefined();
});

afterAll(async () => {
  shutdown.abort();
  await container.removeAtShutdown();
  for (const info of await docker.listContainers({ all: true, filters: { label: [`${LABEL_INSTANCE}=${INSTANCE}`] } }))
    await docker.getContainer(info.Id).remove({ force: true });
  if (base) fs.rmSync(base, { recursive: true, force: true });
});

describe("ContainerTerminal.runForeground", () => {
  it("answers the native path's ForegroundResult, registered with the process registry while it runs", async () => {
    const root = makeProject("fg");
    const owner = { sessionId: "s-fg", projectId: "p-fg" };
    const running = container.runForeground({
      command: "echo out; echo err >&2; sleep 1; exit 4",
      root,
      cwd: "",
      owner,
      timeoutMs: 20_000,
    });
    const seen = await eventually(
      async () => terminalProcesses.list({ sessionId: "s-fg" }),
      (list) => list.length > 0,
      20,
    );
    expect(seen).toEqual([expect.objectContaining({ kind: "foreground", owner, cwd: "/project" })]);
    const result = await running;
    expect(result).toMatchObject({
      exitCode: 4,
      signal: null,
      timedOut: false,
      aborted: false,
      scopeEnded: false,
      leftoversKilled: 0,
      launcherError: undefined,
    });
    expect(result.stdout).toMatchObject({ text: "out\n", truncated: false });
    expect(result.stderr.text).toBe("err\n");
    expect(terminalProcesses.list({ sessionId: "s-fg" })).toEqual([]);
  });

  it("ends and counts what the command left behind, and bounds its output", async () => {
    const root = makeProject("leftovers");
    const owner = { sessionId: "s-left", projectId: "p-left" };
    const result = await container.runForeground({
      command: "setsid -f sleep 1011; sleep 1012 & head -c 100000 /dev/zero | tr '\\0' x",
      root,
      cwd: ".",
      owner,
      timeoutMs: 20_000,
    });
    expect(result).toMatchObject({ exitCode: 0, leftoversKilled: 2 });
    expect(result.stdout).toMatchObject({ bytes: 100_000, truncated: true });
    expect((await processesIn("p-left")).filter((line) => line.startsWith("sleep 101"))).toEqual([]);
  });

  it("reports scopeEnded when the registry ends it", async () => {
    const root = makeProject("scoped");
    const owner = { sessionId: "s-scoped", projectId: "p-scoped" };
    const running = container.runForeground({ command: "sleep 30", root, cwd: "", owner, timeoutMs: 60_000 });
    await eventually(
      async () => terminalProcesses.list({ sessionId: "s-scoped" }),
      (list) => list.length > 0,
      20,
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    await terminalProcesses.end({ sessionId: "s-scoped" });
    expect(await running).toMatchObject({ scopeEnded: true, timedOut: false, aborted: false });
  });
});

describe("ContainerTerminal.launchBackground", () => {
  it("reports start-up, keeps logging, and its registry entry's stop ends the whole job", async () => {
    const root = makeProject("bg");
    const owner = { sessionId: "s-bg", projectId: "p-bg" };
    const launch = await container.launchBackground({
      command: "echo 'Local: http://localhost:5173/'; setsid -f sleep 1021; exec sleep 1022",
      root,
      cwd: "",
      owner,
      signal: shutdown.signal,
    });
    expect(launch).toMatchObject({
      state: "running",
      startup: "announced",
      detectedUrls: ["http://localhost:5173/"],
      detectedPorts: [5173],
      exitCode: null,
    });
    expect(launch.pid).toBeGreaterThan(4_194_304);
    // The log is in the container's /tmp, where the agent's own commands read it.
    expect(launch.logFile).toMatch(/^\/tmp\/urlbridge-logs\/.+\.log$/);
    const tail = await container.runForeground({
      command: `tail -n 5 ${launch.logFile}`,
      root,
      cwd: "",
      owner,
      timeoutMs: 20_000,
    });
    expect(tail.stdout.text).toContain("Local: http://localhost:5173/");
    const tree = terminalProcesses.get(launch.pid);
    expect(tree).toMatchObject({ kind: "background", owner, logFile: launch.logFile });
    expect((await processesIn("p-bg")).filter((line) => line.startsWith("sleep 102"))).toHaveLength(2);
    await tree!.stop("stopped");
    expect((await processesIn("p-bg")).filter((line) => line.startsWith("sleep 102"))).toEqual([]);
    expect(
      await eventually(
        async () => terminalProcesses.get(launch.pid),
        (t) => t === undefined,
        20,
      ),
    ).toBeUndefined();
  });

  it("answers exited with the exit code for a command that finished, and running for one that left a daemon", async () => {
    const root = makeProject("bg-exit");
    const owner = { sessionId: "s-bgx", projectId: "p-bgx" };
    expect(
      await container.launchBackground({ command: "echo done; exit 3", root, cwd: "", owner, signal: shutdown.signal }),
    ).toMatchObject({ state: "exited", exitCode: 3, startup: "exited" });
    const daemon = await container.launchBackground({
      command: "setsid -f sleep 1031",
      root,
      cwd: "",
      owner,
      signal: shutdown.signal,
    });
    expect(daemon).toMatchObject({ state: "running", startup: "exited" });
    // One that closed its output: the script ends, the marked daemon is what keeps the job running.
    const quiet = await container.launchBackground({
      command: "setsid -f sleep 1032 >/dev/null 2>&1",
      root,
      cwd: "",
      owner,
      signal: shutdown.signal,
    });
    expect(quiet).toMatchObject({ state: "running", startup: "exited" });
    await terminalProcesses.get(quiet.pid)!.stop("stopped");
    await terminalProcesses.get(daemon.pid)!.stop("stopped");
  });
});

describe("ContainerTerminal.endScope", () => {
  it("ends every process in the project's container when one of its sessions ends, env -i escapes included", async () => {
    const root = makeProject("scope");
    const owner = { sessionId: "s-scope", projectId: "p-scope" };
    await container.launchBackground({
      command: "setsid -f env -i sleep 1041",
      root,
      cwd: "",
      owner,
      signal: shutdown.signal,
    });
    expect((await processesIn("p-scope")).filter((line) => line.startsWith("sleep 1041"))).toHaveLength(1);
    await container.endScope({ sessionId: "s-scope" });
    const after = await eventually(
      () => processesIn("p-scope"),
      (lines) => !lines.includes("(restarting)") && !lines.some((l) => l.startsWith("sleep 1041")),
    );
    expect(after.filter((line) => line.startsWith("sleep 1041"))).toEqual([]);
    expect(await containersOf("p-scope")).toHaveLength(1);
  });

  it("removes the project's container when the project is deleted", async () => {
    const root = makeProject("deleted");
    await container.runForeground({
      command: "true",
      root,
      cwd: "",
      owner: { sessionId: "s-del", projectId: "p-del" },
      timeoutMs: 20_000,
    });
    expect(await containersOf("p-del")).toHaveLength(1);
    await container.endScope({ projectId: "p-del", projectDeleted: true });
    expect(await containersOf("p-del")).toEqual([]);
  });
});
