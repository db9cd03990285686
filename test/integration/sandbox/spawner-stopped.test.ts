// A resident spawner that stops answering (SIGSTOP here; a frozen cgroup or a machine under swap in life) holds
// only the starts that wait for it: the bridge answers other requests meanwhile (ordering, never speed, is
// asserted). The answer, once it comes, runs the command; no answer within the bound gives the spawner up
// (spawner_lost), and a start still queued behind it (it never reached the spawner) runs directly. An end that
// reaches a start still waiting (a scope end, the bridge's shutdown) ends the command as soon as it has a pid.
import fs from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { isGone } from "../../../server/mutation/terminal/process-tree.js";
import { ErrorCode } from "../../../server/errors.js";
import { launchBackground, MAX_BACKGROUND_PROCESSES } from "../../../server/mutation/terminal/terminal-background.js";
import { TerminalProcesses } from "../../../server/mutation/terminal/terminal-processes.js";
import { runForeground } from "../../../server/mutation/terminal/terminal-run.js";
import { spawnCommand } from "../../../server/mutation/terminal/terminal-spawn.js";
import { pendingSpawnerStarts, spawnedThroughSpawner, spawnerPid } from "../../../server/sandbox/spawner.js";
import { encodeUrlText } from "../../../server/url-grammar/encode.js";
import { agentGet, makeTempDir, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";
import { waitUntil, type Body } from "../mutation/terminal-helpers.js";

const env = { PATH: "/usr/local/bin:/usr/bin:/bin" };
/** Held /x calls wait for their outcome (the journal's longest wait=), so each answers once, finally. */
const HELD = "wait=20000";

let t: TestBridge;
let agent: AgentSession;
let reader: AgentSession;
let stopped: number | undefined;

beforeAll(async () => {
  t = await startTestBridge();
  agent = await t.session({ terminal: true, write: true });
  reader = await t.session({ name: "reader" });
  fs.writeFileSync(path.join(t.projectDir, "notes.txt"), "still served\n");
});
afterAll(() => t.close());
// A failed test must not leave a stopped spawner behind for the next one.
afterEach(() => {
  if (stopped !== undefined && !isGone(stopped)) process.kill(stopped, "SIGCONT");
  stopped = undefined;
});

/** The spawner starts on first need: one command spawned directly, then it answers. */
async function readySpawner(): Promise<number> {
  if (spawnerPid() === undefined)
    await (
      await spawnCommand({ command: "true", cwd: t.projectDir, env, foreground: true })
    ).done;
  expect(await waitUntil(() => spawnerPid() !== undefined)).toBe(true);
  return spawnerPid()!;
}

function stopSpawner(pid: number): void {
  process.kill(pid, "SIGSTOP");
  stopped = pid;
}

/** Starts a GET and records, in `order`, the moment its answer arrived. */
function track<T>(order: string[], name: string, answer: Promise<T>): Promise<T> {
  return answer.then((value) => {
    order.push(name);
    return value;
  });
}

async function otherRequestsAnswer(order: string[]): Promise<void> {
  const health = await track(order, "health", fetch(`${t.bridge.controlUrl}/api/health`));
  expect(health.status).toBe(200);
  const read = await track(order, "r", agentGet<Body>(`${reader.r}/r?path=notes.txt`));
  expect(read).toMatchObject({ ok: true });
  expect(JSON.stringify(read)).toContain("still served");
}

describe("a stopped spawner", () => {
  it("holds only the start that waits for it: /api/health and another session's /r answer first, then the command runs", async () => {
    const spawner = await readySpawner();
    const through = spawnedThroughSpawner();
    stopSpawner(spawner);
    const order: string[] = [];
    const x = track(order, "x", agentGet<Body>(`${agent.m}/x?${HELD}&raw=${encodeUrlText("echo hi")}`));
    expect(await waitUntil(() => pendingSpawnerStarts() === 1, 10_000)).toBe(true);
    await otherRequestsAnswer(order);
    expect(order).toEqual(["health", "r"]);
    expect(pendingSpawnerStarts()).toBe(1);

    process.kill(spawner, "SIGCONT");
    stopped = undefined;
    expect(await x).toMatchObject({ ok: true, exitCode: 0, stdout: "hi\n" });
    expect(order).toEqual(["health", "r", "x"]);
    // The same spawner answered: it was not given up, and the command went through it.
    expect(spawnerPid()).toBe(spawner);
    expect(spawnedThroughSpawner()).toBe(through + 1);
  });

  it("is given up after the bound: the held /x answers spawner_lost without running, and a start queued behind it runs directly", async () => {
    const spawner = await readySpawner();
    stopSpawner(spawner);
    const order: string[] = [];
    const first = track(
      order,
      "first",
      agentGet<Body>(`${agent.m}/x?${HELD}&raw=${encodeUrlText("echo one > lost-one.txt")}`),
    );
    expect(await waitUntil(() => pendingSpawnerStarts() === 1, 10_000)).toBe(true);
    const second = track(order, "second", agentGet<Body>(`${agent.m}/x?${HELD}&raw=${encodeUrlText("echo two")}`));
    // Serialized: the second waits its turn in the bridge, its request not yet written to the spawner's pipe.
    expect(await waitUntil(() => pendingSpawnerStarts() === 2, 10_000)).toBe(true);
    await otherRequestsAnswer(order);
    expect(order).toEqual(["health", "r"]);

    expect(await first).toMatchObject({
      ok: false,
      state: "failed",
      errorCode: "interrupted",
      errorDetail: { started: true, reason: "spawner_lost" },
    });
    expect(await second).toMatchObject({ ok: true, exitCode: 0, stdout: "two\n" });
    expect(await waitUntil(() => isGone(spawner))).toBe(true);
    stopped = undefined;
    // The stopped spawner never forked the first command.
    expect(fs.existsSync(path.join(t.projectDir, "lost-one.txt"))).toBe(false);
    const again = await agentGet<Body>(`${agent.m}/x?raw=echo+again`);
    expect(again).toMatchObject({ ok: true, stdout: "again\n" });
  });

  it("lets a scope end reach a start still waiting: the command is ended as soon as it has a pid", async () => {
    const spawner = await readySpawner();
    const processes = new TerminalProcesses();
    const owner = { sessionId: "s-pending", projectId: "p-pending" };
    const dir = makeTempDir("pending-end");
    stopSpawner(spawner);
    const run = runForeground({
      command: "echo $$ > shell.pid; exec sleep 300",
      cwd: dir,
      env,
      timeoutMs: 60_000,
      processes,
      owner,
    });
    expect(await waitUntil(() => pendingSpawnerStarts() === 1, 10_000)).toBe(true);
    let ended = false;
    const end = processes.end({ sessionId: owner.sessionId }).then((count) => {
      ended = true;
      return count;
    });
    expect(processes.count({ sessionId: owner.sessionId })).toBe(1);
    process.kill(spawner, "SIGCONT");
    stopped = undefined;
    const result = await run;
    expect(result).toMatchObject({ scopeEnded: true, aborted: false, timedOut: false });
    expect(await end).toBe(1);
    expect(ended).toBe(true);
    expect(processes.count()).toBe(0);
    expect(isGone(result.pid!)).toBe(true);
    const shellPid = path.join(dir, "shell.pid");
    if (fs.existsSync(shellPid))
      expect(await waitUntil(() => isGone(Number(fs.readFileSync(shellPid, "utf8"))))).toBe(true);
    expect(spawnerPid()).toBe(spawner);
  });
});

describe("bg=1 launches waiting for a stopped spawner", () => {
  it("count against the background limit while they wait, and all run once it answers", async () => {
    const spawner = await readySpawner();
    const processes = new TerminalProcesses();
    const shutdown = new AbortController();
    const dir = makeTempDir("pending-bg");
    const owner = { sessionId: "s-bg", projectId: "p-bg" };
    const launch = () =>
      launchBackground({
        command: "exec sleep 300",
        cwd: dir,
        env,
        signal: shutdown.signal,
        processes,
        owner,
        windowMs: 50,
      });
    stopSpawner(spawner);
    try {
      const waiting = Array.from({ length: MAX_BACKGROUND_PROCESSES }, launch);
      expect(await waitUntil(() => pendingSpawnerStarts() === MAX_BACKGROUND_PROCESSES, 10_000)).toBe(true);
      await expect(launch()).rejects.toMatchObject({ code: ErrorCode.backgroundLimitReached });
      process.kill(spawner, "SIGCONT");
      stopped = undefined;
      const launched = await Promise.all(waiting);
      expect(launched.map((l) => l.state)).toEqual(Array(MAX_BACKGROUND_PROCESSES).fill("running"));
      expect(new Set(launched.map((l) => l.pid)).size).toBe(MAX_BACKGROUND_PROCESSES);
    } finally {
      shutdown.abort();
      await processes.end({}, "shutdown");
    }
    // Each tree leaves the registry once its output is drained too, just after its launcher exited.
    expect(await waitUntil(() => processes.count() === 0)).toBe(true);
  });
});

describe("a bridge shutting down while a start waits for a stopped spawner", () => {
  it("waits for that start and ends its command once it has a pid, leaving nothing running", async () => {
    const other = await startTestBridge();
    const session = await other.session({ terminal: true, write: true });
    const spawner = await readySpawner();
    stopSpawner(spawner);
    const x = agentGet<Body>(
      `${session.m}/x?${HELD}&raw=${encodeUrlText("echo $$ > shutdown-shell.pid; exec sleep 300")}`,
    ).catch(() => undefined);
    expect(await waitUntil(() => pendingSpawnerStarts() === 1, 10_000)).toBe(true);
    let closed = false;
    const closing = other.close().then(() => (closed = true));
    // Shutdown reached the pending start through the registry: it does not complete while the start waits.
    expect(await waitUntil(() => closed, 300)).toBe(false);
    expect(pendingSpawnerStarts()).toBe(1);
    process.kill(spawner, "SIGCONT");
    stopped = undefined;
    await closing;
    // By the time close resolved, the command it let start had been ended (if its shell got to run at all).
    const shellPid = path.join(other.projectDir, "shutdown-shell.pid");
    if (fs.existsSync(shellPid) && fs.readFileSync(shellPid, "utf8").endsWith("\n"))
      expect(isGone(Number(fs.readFileSync(shellPid, "utf8")))).toBe(true);
    await x;
    expect(pendingSpawnerStarts()).toBe(0);
    // The spawner itself serves the other bridges of this process on.
    expect(spawnerPid()).toBe(spawner);
  });
});
