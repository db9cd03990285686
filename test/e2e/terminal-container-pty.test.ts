// pty=1 in URLBRIDGE_SANDBOX=container through a real in-process bridge and the real Docker engine: the command
// runs on a Docker exec's TTY in the project's container, typed into with /i and read with /m as on the host. A
// Node REPL (the sandbox image has node, not python), a read -p prompt, Ctrl-C and Ctrl-D, a resize, input typed
// once, the isolation and identity of /x, stop and the end of a session ending the whole tree, the per-session cap,
// and a bridge restart that ends every PTY and says so.
import fs from "node:fs";
import path from "node:path";
import Dockerode from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PTY_REPLAY_BYTES } from "../../server/mutation/terminal/pty/pty-limits.js";
import { LABEL_INSTANCE } from "../../server/sandbox/container/spec.js";
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

const INSTANCE = `e2e-pty-${process.pid}`;
/** Polls are bounded: a broken journal fails the test instead of hanging it. */
const MAX_POLLS = 120;
/** Past the replay bound (1 MiB), through the emulator's backlog bound, many times over. */
const FLOOD_BYTES = 24 * 1024 * 1024;
const docker = new Dockerode();
const { containersOf, processesIn } = createSandboxProbe(docker, INSTANCE);

let t: TestBridge;
let s: AgentSession;
let otherRoot: string;

async function settle(url: string): Promise<Body> {
  let body = await agentGet<Body>(url);
  for (let i = 0; i < MAX_POLLS && (body.state === "pending" || body.state === "running"); i++)
    body = await agentGet<Body>(String(body.poll));
  return body;
}

let starts = 0;

/** Starts a pty=1 process and answers its start body; each start its own intent (run=), as the same URL replays. */
async function start(session: AgentSession, command: string, extra = ""): Promise<Body> {
  starts += 1;
  const body = await settle(`${session.m}/x?pty=1&run=start-${starts}${extra}&raw=${encodeUrlText(command)}`);
  expect(body, JSON.stringify(body)).toMatchObject({ ok: true, mode: "pty", processState: "running" });
  return body;
}

/** One /i call: text (raw=, last) after the other parameters. */
function input(pid: unknown, params: string, text?: string, session = s): Promise<Body> {
  const raw = text === undefined ? "" : `&raw=${encodeUrlText(text)}`;
  return settle(`${session.m}/i?pid=${String(pid)}${params ? `&${params}` : ""}${raw}`);
}

const running = async (projectId: string, prefix: string) =>
  (await processesIn(projectId)).filter((line) => line.startsWith(prefix));

describe("pty=1 in URLBRIDGE_SANDBOX=container", () => {
  beforeAll(async () => {
    await docker.ping();
    t = await startTestBridge({ URLBRIDGE_SANDBOX: "container", URLBRIDGE_SANDBOX_INSTANCE: INSTANCE });
    s = await t.session({ terminal: true, write: true, name: "pty-container" });
    otherRoot = makeTempDir("pty-project-b");
    fs.writeFileSync(path.join(otherRoot, "b-secret.txt"), "project b only\n");
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

  it("drives a Node REPL: defines a function, calls it, reads the answer from the screen; Ctrl-D ends it", async () => {
    const repl = await start(s, "node");
    await input(repl.pid, "key=enter&expect=undefined", "function cube(n) { return n ** 3 }");
    const answer = await input(repl.pid, "key=enter&expect=344", "cube(7) + 1");
    expect(answer.waited).toMatchObject({ until: "text" });
    expect(String(answer.screen).split("\n")).toContain("344");
    const ended = await input(repl.pid, "key=ctrl-d&expect=never-printed&timeout=10000");
    expect(ended).toMatchObject({ ok: true, processState: "exited", exitCode: 0, endReason: "exited" });
    const view = await agentGet<Body>(`${s.m}/m?pid=${String(repl.pid)}`);
    expect(view).toMatchObject({ ok: true, mode: "screen", processState: "exited" });
    expect(view.screen).toContain("344");
  });

  it("answers a read -p prompt by waiting for its text", async () => {
    fs.writeFileSync(
      path.join(t.projectDir, "ask.sh"),
      'read -p "Your name? " name\nread -p "Greet $name? [y/N] " yes\n[ "$yes" = y ] && echo "Hello, $name!" || echo skipped\nsleep 5\n',
    );
    const asking = await start(s, "bash ask.sh");
    expect(asking.screen).toBe("Your name?");
    const second = await input(asking.pid, "key=enter&expect=[y/N]", "Ada");
    expect(second.waited).toMatchObject({ until: "text" });
    expect(second.screen).toContain("Greet Ada? [y/N]");
    const done = await input(asking.pid, "key=enter&expect=Hello", "y");
    expect(done.output).toContain("Hello, Ada!");
    await settle(`${s.m}/x?stop=${String(asking.pid)}`);
  });

  it("ends a sleep with Ctrl-C (and with signal=INT) without ending the shell; Ctrl-D ends the shell", async () => {
    const shell = await start(s, "bash --norc --noprofile -i");
    await input(shell.pid, "key=enter&quiet=500", "sleep 1101");
    expect(await running(s.projectId, "sleep 1101")).toHaveLength(1);
    const interrupted = await input(shell.pid, "key=ctrl-c&quiet=300");
    expect(interrupted.processState).toBe("running");
    expect(await running(s.projectId, "sleep 1101")).toEqual([]);
    const alive = await input(shell.pid, "key=enter&expect=alive-42", "echo alive-$((6*7))");
    expect(alive.output).toContain("alive-42");
    // signal= reaches the terminal's foreground group through a second exec (Docker cannot signal an exec).
    await input(shell.pid, "key=enter&quiet=500", "sleep 1102");
    const signalled = await input(shell.pid, "signal=INT&quiet=300");
    expect(signalled).toMatchObject({ processState: "running", sent: { signal: "SIGINT" } });
    expect(await running(s.projectId, "sleep 1102")).toEqual([]);
    expect((await input(shell.pid, "key=enter&expect=still-43", "echo still-$((6*7+1))")).output).toContain("still-43");
    const ended = await input(shell.pid, "key=ctrl-d&expect=never-printed&timeout=10000");
    expect(ended).toMatchObject({ processState: "exited", endReason: "exited" });
  });

  it("sizes the terminal at the start and the program sees a resize (stty size)", async () => {
    const shell = await start(s, "bash --norc --noprofile -i", "&rows=20&cols=70");
    expect(shell).toMatchObject({ rows: 20, cols: 70 });
    const initial = await input(shell.pid, `key=enter&pattern=${encodeUrlText("^20 70")}`, "stty size");
    expect(initial.waited).toMatchObject({ until: "pattern" });
    const resized = await input(shell.pid, "rows=30&cols=100");
    expect(resized).toMatchObject({ rows: 30, cols: 100, sent: { resized: { rows: 30, cols: 100 } } });
    const size = await input(shell.pid, `key=enter&pattern=${encodeUrlText("^30 100")}`, "stty size");
    expect(size.waited).toMatchObject({ until: "pattern" });
    await settle(`${s.m}/x?stop=${String(shell.pid)}`);
  });

  it("types an input once however often the same GET is fetched", async () => {
    const shell = await start(s, "bash --norc --noprofile -i");
    const url = `${s.m}/i?pid=${String(shell.pid)}&key=enter&expect=typed&raw=${encodeUrlText("echo once >> typed.txt; echo typed")}`;
    const first = await settle(url);
    const second = await settle(url);
    const third = await settle(url);
    expect(first).toMatchObject({ ok: true, mode: "input" });
    expect(second.callId).toBe(first.callId);
    expect(third.callId).toBe(first.callId);
    expect(fs.readFileSync(path.join(t.projectDir, "typed.txt"), "utf8")).toBe("once\n");
    await settle(`${s.m}/x?stop=${String(shell.pid)}`);
  });

  it("runs as the agent's uid and sees only its project at /project", async () => {
    const shell = await start(s, "bash --norc --noprofile -i");
    const probe = [
      "echo uid=$(id -u) cwd=$(pwd)",
      `cat ${path.join(otherRoot, "b-secret.txt")} 2>&1 | head -c 200`,
      "find / -path /proc -prune -o -name b-secret.txt -print 2>/dev/null",
      "echo pty > by-pty.txt",
      "echo probe-$((2*21))",
    ].join("; ");
    const seen = await input(shell.pid, "key=enter&expect=probe-42&timeout=20000", probe);
    expect(seen.waited).toMatchObject({ until: "text" });
    expect(seen.output).toContain(`uid=${TEST_AGENT_UID} cwd=/project`);
    expect(seen.output).toContain("No such file or directory");
    expect(seen.output).not.toContain("project b only");
    expect(
      String(seen.output)
        .split("\n")
        .some((line) => line.includes("b-secret.txt") && !line.includes("cat")),
    ).toBe(false);
    expect(fs.statSync(path.join(t.projectDir, "by-pty.txt")).uid).toBe(TEST_AGENT_UID);
    await settle(`${s.m}/x?stop=${String(shell.pid)}`);
  });

  it("stop= ends the whole tree: a background job and a setsid'd daemon leave nothing in the container", async () => {
    const shell = await start(s, "bash --norc --noprofile -i");
    await input(shell.pid, "key=enter&expect=bg-started", "sleep 1201 & setsid -f sleep 1202; echo bg-started");
    expect(await running(s.projectId, "sleep 120")).toHaveLength(2);
    const stopped = await settle(`${s.m}/x?stop=${String(shell.pid)}`);
    expect(stopped).toMatchObject({ ok: true, mode: "stop", stopped: true });
    expect(await running(s.projectId, "sleep 120")).toEqual([]);
    expect((await processesIn(s.projectId)).filter((line) => line.startsWith("bash"))).toEqual([]);
    const view = await agentGet<Body>(`${s.m}/m?pid=${String(shell.pid)}`);
    // The exec's exit code: 128 + 9, the shell was killed by its job's sweep.
    expect(view).toMatchObject({ ok: true, processState: "exited", endReason: "stopped", exitCode: 137 });
    const typed = await input(shell.pid, "key=enter");
    expect(typed).toMatchObject({ ok: false, errorCode: "process_ended" });
  });

  it("reads a 24 MiB flood to its last byte and reports what the replay bound dropped", async () => {
    const flood = await start(s, `yes 'a line of the flood' | head -c ${FLOOD_BYTES}; echo; echo flood-end; sleep 60`);
    let view = await agentGet<Body>(`${s.m}/m?pid=${String(flood.pid)}`);
    for (let i = 0; i < MAX_POLLS && !String(view.screen).includes("flood-end"); i++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      view = await agentGet<Body>(`${s.m}/m?pid=${String(flood.pid)}`);
    }
    expect(view.screen).toContain("flood-end");
    // yes and echo write "\n"; the TTY turns each into "\r\n" (head cuts the last line short, before its "\n").
    const lines = Math.floor(FLOOD_BYTES / "a line of the flood\n".length);
    expect(view.endOffset).toBe(FLOOD_BYTES + lines + "\r\nflood-end\r\n".length);
    const head = await agentGet<Body>(`${s.m}/m?pid=${String(flood.pid)}&offset=0&limit=64`);
    expect(head).toMatchObject({ mode: "raw", lostBytes: Number(view.endOffset) - PTY_REPLAY_BYTES });
    await settle(`${s.m}/x?stop=${String(flood.pid)}`);
  });

  it("refuses a fifth PTY in one session with pty_limit_reached; the list shows the four", async () => {
    const own = await t.session({ terminal: true, name: "pty-cap" });
    const pids: unknown[] = [];
    // Each start its own intent (run=): the same URL again would answer the first start.
    for (let i = 0; i < 4; i++) pids.push((await settle(`${own.m}/x?pty=1&run=cap-${i}&raw=cat`)).pid);
    expect(new Set(pids).size).toBe(4);
    const fifth = await settle(`${own.m}/x?pty=1&run=cap-4&raw=cat`);
    expect(fifth).toMatchObject({ ok: false, errorCode: "pty_limit_reached", retryable: true });
    const list = await agentGet<Body>(`${own.m}/m`);
    expect((list.processes as Body[]).map((p) => p.pid).sort()).toEqual([...pids].sort());
    for (const pid of pids) await settle(`${own.m}/x?stop=${String(pid)}`);
    expect(await running(own.projectId, "cat")).toEqual([]);
  });

  it("ends a PTY's tree when its session is deleted", async () => {
    const root = makeTempDir("pty-victim");
    const victim = await t.session({ terminal: true, root, name: "pty-victim" });
    const shell = await start(victim, "bash --norc --noprofile -i");
    await input(shell.pid, "key=enter&quiet=500", "sleep 1301", victim);
    expect(await running(victim.projectId, "sleep 1301")).toHaveLength(1);
    expect((await t.api("DELETE", `/api/sessions/${victim.sessionId}`)).status).toBe(204);
    const after = await eventually(
      () => processesIn(victim.projectId),
      (lines) => !lines.some((line) => line.startsWith("sleep 1301")) && !lines.includes("(restarting)"),
    );
    expect(after.filter((line) => line.startsWith("sleep 1301"))).toEqual([]);
  });

  it("a bridge restart ends every PTY (the instance's containers go), and the next call says so", async () => {
    const shell = await start(s, "bash --norc --noprofile -i");
    await input(shell.pid, "key=enter&quiet=500", "sleep 1401");
    await t.close();
    expect(await containersOf(s.projectId)).toEqual([]);
    const before = t;
    t = await startTestBridge(
      { URLBRIDGE_SANDBOX: "container", URLBRIDGE_SANDBOX_INSTANCE: INSTANCE },
      { stateDir: before.stateDir },
    );
    // Same state, same capabilities; only the port (and so the origin) is new.
    const moved = { ...s, m: String(s.m).replace(before.bridge.dataUrl, t.bridge.dataUrl) };
    const after = await input(shell.pid, "key=enter", undefined, moved);
    expect(after).toMatchObject({ ok: false, errorCode: "process_not_found" });
    expect(JSON.stringify(after)).toContain("restart ends every PTY process");
  });
});
