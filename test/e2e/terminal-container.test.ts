// URLBRIDGE_SANDBOX=container through a real in-process bridge and the real Docker engine: /x runs in the
// project's own container (exit codes, output, cwd=, timeouts, host file ownership, other projects invisible),
// bg=1 and stop=, and the lifecycle: leftovers of a command, a session's end and a project's deletion.
import fs from "node:fs";
import path from "node:path";
import Dockerode from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LABEL_INSTANCE, LABEL_PROJECT, LABEL_ROLE, SANDBOX_ROLE } from "../../server/sandbox/container/spec.js";
import { encodeUrlText } from "../../server/url-grammar/encode.js";
import {
  agentGet,
  makeTempDir,
  removeTempDirs,
  startTestBridge,
  TEST_AGENT_UID,
  type AgentSession,
  type TestBridge,
} from "../helpers/bridge.js";
import { createSandboxProbe, eventually } from "./support/sandbox-probe.js";

type Body = Record<string, unknown> & { ok: boolean };

const INSTANCE = `e2e-terminal-${process.pid}`;
const STALE_PROJECT = "p-left-by-a-crash";
/** Polls are bounded: a broken journal or lifecycle fails the test instead of hanging it. */
const MAX_POLLS = 120;
const docker = new Dockerode();

let t: TestBridge;
let s: AgentSession;
let other: AgentSession;
let otherRoot: string;

async function settle(url: string): Promise<Body> {
  let body = await agentGet<Body>(url);
  for (let i = 0; i < MAX_POLLS && (body.state === "pending" || body.state === "running"); i++)
    body = await agentGet<Body>(String(body.poll));
  return body;
}

const x = (session: AgentSession, command: string, query = "") =>
  settle(`${session.m}/x?${query}${query ? "&" : ""}raw=${encodeUrlText(command)}`);

const { containersOf, processesIn } = createSandboxProbe(docker, INSTANCE);

describe("URLBRIDGE_SANDBOX=container through /x", () => {
  beforeAll(async () => {
    await docker.ping();
    // What a crashed bridge of this instance left behind: a container with a command nobody tracks any more.
    const stale = await docker.createContainer({
      Image: "node:20-bookworm-slim",
      Cmd: ["sleep", "infinity"],
      Labels: { [LABEL_ROLE]: SANDBOX_ROLE, [LABEL_INSTANCE]: INSTANCE, [LABEL_PROJECT]: STALE_PROJECT },
      HostConfig: { NetworkMode: "none" },
    });
    await stale.start();
    t = await startTestBridge({ URLBRIDGE_SANDBOX: "container", URLBRIDGE_SANDBOX_INSTANCE: INSTANCE });
    fs.mkdirSync(path.join(t.projectDir, "src"));
    s = await t.session({ terminal: true, write: true, name: "container-a" });
    otherRoot = makeTempDir("project-b");
    fs.writeFileSync(path.join(otherRoot, "b-secret.txt"), "project b only\n");
    other = await t.session({ terminal: true, root: otherRoot, name: "container-b" });
  });

  afterAll(async () => {
    await t?.close();
    for (const info of await docker.listContainers({
      all: true,
      filters: { label: [`${LABEL_INSTANCE}=${INSTANCE}`] },
    })) {
      await docker.getContainer(info.Id).remove({ force: true });
    }
    removeTempDirs();
  });

  it("removes at start-up the containers an earlier bridge of its instance left", async () => {
    expect(await containersOf(STALE_PROJECT)).toEqual([]);
  });

  it("runs in the project's own container and reports stdout, stderr and the exit code", async () => {
    const body = await x(s, "echo hello; echo oops >&2; cat /etc/hostname; exit 3");
    expect(body).toMatchObject({
      ok: true,
      mode: "foreground",
      exitCode: 3,
      stdout: "hello\nsandbox\n",
      stderr: "oops\n",
      cwd: "/project",
    });
    const [info] = await containersOf(s.projectId);
    expect(info?.State).toBe("running");
    expect(info?.Mounts.filter((m) => m.Type === "bind").map((m) => [m.Source, m.Destination])).toEqual([
      [t.projectDir, "/project"],
    ]);
  });

  it("honours cwd= below /project", async () => {
    expect(await x(s, "pwd", "cwd=src")).toMatchObject({
      ok: true,
      exitCode: 0,
      stdout: "/project/src\n",
      cwd: "/project/src",
    });
  });

  it("ends a command at its timeout with command_timed_out", async () => {
    const body = await x(s, "echo started; sleep 30", "timeout=1000");
    expect(body).toMatchObject({ ok: false, errorCode: "command_timed_out", timedOut: true, stdout: "started\n" });
    expect((await processesIn(s.projectId)).some((line) => line.startsWith("sleep 30"))).toBe(false);
  });

  it("creates files that belong on the host to uid 1000, never root", async () => {
    const body = await x(s, "id -u; mkdir -p made && echo x > made/by-terminal.txt");
    expect(body).toMatchObject({ ok: true, exitCode: 0, stdout: `${TEST_AGENT_UID}\n` });
    for (const made of ["made", "made/by-terminal.txt"])
      expect(fs.statSync(path.join(t.projectDir, made)).uid).toBe(TEST_AGENT_UID);
  });

  it("cannot see another project's folder, by its host path or by searching", async () => {
    const direct = await x(s, `cat ${path.join(otherRoot, "b-secret.txt")}; ls -d ${otherRoot}`);
    expect(direct).toMatchObject({ ok: true });
    expect(direct.exitCode).not.toBe(0);
    expect(String(direct.stdout)).not.toContain("project b only");
    const search = await x(
      s,
      "find / -path /proc -prune -o -name b-secret.txt -print 2>/dev/null; echo done",
      "timeout=60000",
    );
    expect(search).toMatchObject({ ok: true, stdout: "done\n" });
    // ...while project b's own container sees it at /project.
    expect(await x(other, "cat b-secret.txt")).toMatchObject({ ok: true, stdout: "project b only\n" });
  });

  it("ends what a foreground command left running (setsid -f) when it returns", async () => {
    const body = await x(s, "setsid -f sleep 1001; echo left");
    expect(body).toMatchObject({ ok: true, exitCode: 0, stdout: "left\n", leftoversKilled: 1 });
    expect((await processesIn(s.projectId)).some((line) => line.startsWith("sleep 1001"))).toBe(false);
  });

  it("starts bg=1 work in the container, reports its start-up, and stop= ends it", async () => {
    const launch = await x(s, "echo 'listening on port 4321'; exec sleep 1002", "bg=1");
    expect(launch).toMatchObject({ ok: true, mode: "background", processState: "running", detectedPorts: [4321] });
    expect(String(launch.transcript)).toContain("listening on port 4321");
    expect(await x(s, `tail -n 5 ${String(launch.logFile)}`)).toMatchObject({
      ok: true,
      stdout: "listening on port 4321\n",
    });
    expect((await processesIn(s.projectId)).some((line) => line.startsWith("sleep 1002"))).toBe(true);
    const stopped = await settle(String(launch.stop));
    expect(stopped).toMatchObject({ ok: true, mode: "stop", stopped: true });
    expect((await processesIn(s.projectId)).some((line) => line.startsWith("sleep 1002"))).toBe(false);
  });

  it("ends setsid'd daemons started with bg=1 when their session is deleted, even one that dropped its environment", async () => {
    const victim = await t.session({ terminal: true, name: "container-victim" });
    // env -i drops the job marker, so only the end of every process in the project's container reaches it.
    const launch = await x(victim, "setsid -f sleep 1000; setsid -f env -i sleep 1003", "bg=1");
    expect(launch).toMatchObject({ ok: true, mode: "background", processState: "running" });
    const daemons = (lines: string[]) =>
      lines.filter((line) => line.startsWith("sleep 1000") || line.startsWith("sleep 1003"));
    expect(daemons(await processesIn(victim.projectId))).toHaveLength(2);
    expect((await t.api("DELETE", `/api/sessions/${victim.sessionId}`)).status).toBe(204);
    const after = await eventually(
      () => processesIn(victim.projectId),
      (lines) => daemons(lines).length === 0 && !lines.includes("(restarting)"),
    );
    expect(daemons(after)).toEqual([]);
  });

  it("removes the project's container when the project is deleted; its files stay", async () => {
    expect(await containersOf(other.projectId)).toHaveLength(1);
    expect((await t.api("DELETE", `/api/projects/${other.projectId}`)).status).toBe(204);
    const left = await eventually(
      () => containersOf(other.projectId),
      (list) => list.length === 0,
    );
    expect(left).toHaveLength(0);
    expect(fs.readFileSync(path.join(otherRoot, "b-secret.txt"), "utf8")).toBe("project b only\n");
  });

  it("shows the mode and what it enforces in /api/health", async () => {
    const health = await t.api<{ sandbox?: Record<string, unknown> }>("GET", "/api/health");
    expect(health.body.sandbox).toMatchObject({
      mode: "container",
      filesystem: true,
      network: true,
      perProjectIsolation: true,
      identitySeparation: true,
    });
  });

  it("removes its containers when the bridge shuts down, so nothing of it keeps running on the host", async () => {
    const mine = () => docker.listContainers({ all: true, filters: { label: [`${LABEL_INSTANCE}=${INSTANCE}`] } });
    expect((await mine()).length).toBeGreaterThan(0);
    await t.close();
    expect(await mine()).toEqual([]);
  });
});
