// pty=1 processes through URLs, with real programs on real PTYs under the sandbox launcher: a Python REPL, shell
// prompts, a full-screen program, Ctrl-C and Ctrl-D, a resize the program sees, a pattern wait off the main thread,
// and input typed exactly once however often the same GET is fetched.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeUrlText } from "../../../server/url-grammar/encode.js";
import { agentGet, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";
import { settle, type Body } from "../mutation/terminal-helpers.js";

const PYTHON = "/usr/bin/python3";
/** The bound of a pattern wait given a regex that never finishes. */
const HOSTILE_WAIT_MS = 2000;

let t: TestBridge;
let s: AgentSession;

beforeAll(async () => {
  t = await startTestBridge();
  s = await t.session({ terminal: true, write: true });
});

afterAll(async () => {
  await t.close();
});

/** Starts a pty=1 process and answers its start body. */
async function start(command: string, extra = ""): Promise<Body> {
  const body = await settle(`${s.m}/x?pty=1${extra}&raw=${encodeUrlText(command)}`);
  expect(body, JSON.stringify(body)).toMatchObject({ ok: true, mode: "pty", processState: "running" });
  return body;
}

/** One /i call: text (raw=, last) after the other parameters. */
function input(pid: unknown, params: string, text?: string): Promise<Body> {
  const raw = text === undefined ? "" : `&raw=${encodeUrlText(text)}`;
  return settle(`${s.m}/i?pid=${String(pid)}${params ? `&${params}` : ""}${raw}`);
}

describe("pty=1 through URLs", () => {
  it("drives a Python REPL: defines a function, calls it, reads the answer from the screen; Ctrl-D ends it", async () => {
    const repl = await start(`${PYTHON} -q`);
    expect(repl.screen).toContain(">>>");
    await input(repl.pid, "key=enter,enter&expect=>>>+", "def square(n): return n * n");
    const answer = await input(repl.pid, "key=enter&expect=>>>+", "print(square(12) + 1)");
    expect(answer.waited).toMatchObject({ until: "text" });
    expect(answer.output).toContain("145");
    expect(String(answer.screen).split("\n")).toContain("145");
    const ended = await input(repl.pid, "key=ctrl-d&expect=never-printed&timeout=5000");
    expect(ended).toMatchObject({ ok: true, processState: "exited", exitCode: 0, endReason: "exited" });
    expect(ended.waited).toMatchObject({ until: "exited" });
    const after = await input(repl.pid, "key=enter");
    expect(after).toMatchObject({ ok: false, errorCode: "process_ended" });
    const view = await agentGet<Body>(`${s.m}/m?pid=${String(repl.pid)}`);
    expect(view).toMatchObject({ ok: true, mode: "screen", processState: "exited" });
    expect(view.screen).toContain("145");
  });

  it("answers a read -p prompt and a y/N question by waiting for each prompt's text", async () => {
    fs.writeFileSync(
      path.join(t.projectDir, "ask.sh"),
      'read -p "Your name? " name\nread -p "Greet $name? [y/N] " yes\n[ "$yes" = y ] && echo "Hello, $name!" || echo skipped\nsleep 5\n',
    );
    const asking = await start("bash ask.sh");
    expect(asking.screen).toBe("Your name?");
    const second = await input(asking.pid, "key=enter&expect=[y/N]", "Ada");
    expect(second.waited).toMatchObject({ until: "text" });
    expect(second.screen).toContain("Greet Ada? [y/N]");
    const done = await input(asking.pid, "key=enter&expect=Hello", "y");
    expect(done.output).toContain("Hello, Ada!");
  });

  it("reads a full-screen program (less) as a screen, with the cursor on its prompt line", async () => {
    const lines = Array.from({ length: 100 }, (_, i) => `line ${i + 1}`).join("\n");
    fs.writeFileSync(path.join(t.projectDir, "numbers.txt"), `${lines}\n`);
    const pager = await start("less numbers.txt", "&rows=10&cols=40");
    expect(pager).toMatchObject({ rows: 10, cols: 40, altScreen: true });
    const rows = String(pager.screen).split("\n");
    expect(rows.slice(0, 9)).toEqual(Array.from({ length: 9 }, (_, i) => `line ${i + 1}`));
    expect(pager.cursor).toMatchObject({ row: 10 });
    const paged = await input(pager.pid, "", " ");
    expect(String(paged.screen).split("\n")[0]).toBe("line 10");
    const quit = await input(pager.pid, "expect=never-printed&timeout=5000", "q");
    expect(quit).toMatchObject({ processState: "exited", exitCode: 0 });
  });

  it("stops a long command with Ctrl-C without ending the shell, and the program sees a resize", async () => {
    const shell = await start("bash --norc --noprofile -i", "&rows=24&cols=80");
    // The marker comes from the command itself: bash has handed it the terminal before Ctrl-C is typed.
    await input(shell.pid, "key=enter&expect=sleeping-2", "sh -c 'echo sleeping-$((1+1)); exec sleep 60'");
    const interrupted = await input(shell.pid, "key=ctrl-c&quiet=300");
    expect(interrupted.processState).toBe("running");
    const alive = await input(shell.pid, "key=enter&expect=alive-42", "echo alive-$((6*7))");
    expect(alive.output).toContain("alive-42");
    const resized = await input(shell.pid, "rows=30&cols=100");
    expect(resized).toMatchObject({ rows: 30, cols: 100, sent: { resized: { rows: 30, cols: 100 } } });
    const size = await input(shell.pid, "key=enter&pattern=^30+100", "stty size");
    expect(size.waited).toMatchObject({ until: "pattern" });
    const stopped = await settle(`${s.m}/x?stop=${String(shell.pid)}`);
    expect(stopped).toMatchObject({ ok: true, mode: "stop", stopped: true });
  });

  it("waits for a pattern off the main thread: a backtracking regex times out while the bridge keeps answering", async () => {
    fs.writeFileSync(
      path.join(t.projectDir, "runs.sh"),
      `read line\nprintf '%s\\n' ${"a".repeat(40)}b\nread line\necho done-now\nsleep 30\n`,
    );
    const runs = await start("bash runs.sh");
    const order: string[] = [];
    // (a+)+$ backtracks exponentially on the a's before the b: far longer than the wait.
    const hostile = input(runs.pid, `key=enter&timeout=${HOSTILE_WAIT_MS}&pattern=${encodeUrlText("(a+)+$")}`).then(
      (body) => (order.push("input"), body),
    );
    // On the main thread the regex would hold the event loop far past the wait, and this view would not answer.
    await new Promise((resolve) => setTimeout(resolve, HOSTILE_WAIT_MS / 4));
    const view = await agentGet<Body>(`${s.m}/m?pid=${String(runs.pid)}`);
    order.push("view");
    expect(view).toMatchObject({ ok: true, mode: "screen" });
    const answer = await hostile;
    expect(answer).toMatchObject({ ok: true, waited: { until: "timeout" } });
    expect(answer.output).toContain("aaab");
    expect(order).toEqual(["view", "input"]);
    // The overrun worker was replaced: the next wait matches.
    const next = await input(runs.pid, `key=enter&pattern=${encodeUrlText("^done-\\w+$")}`);
    expect(next).toMatchObject({ ok: true, waited: { until: "pattern" } });
    expect(next.output).toContain("done-now");
    await settle(`${s.m}/x?stop=${String(runs.pid)}`);
  });

  it("types an input once however often the same GET is fetched", async () => {
    const shell = await start("bash --norc --noprofile -i");
    const url = `${s.m}/i?pid=${String(shell.pid)}&key=enter&expect=typed&raw=${encodeUrlText("echo once >> typed.txt; echo typed")}`;
    const first = await settle(url);
    const second = await settle(url);
    const third = await settle(url);
    expect(first).toMatchObject({ ok: true, mode: "input" });
    expect(second.callId).toBe(first.callId);
    expect(third.callId).toBe(first.callId);
    expect(fs.readFileSync(path.join(t.projectDir, "typed.txt"), "utf8")).toBe("once\n");
    // The operator's Activity shows the input calls with their content as a size only.
    const activity = await t.api<Array<{ tool: string | null; params: Record<string, string> | null }>>(
      "GET",
      `/api/activity?sessionId=${s.sessionId}`,
    );
    const inputs = activity.body.filter((entry) => entry.tool === "terminal_input");
    expect(inputs.length).toBeGreaterThanOrEqual(3);
    expect(inputs[0]!.params).toMatchObject({ raw: expect.stringMatching(/^<\d+ bytes>$/), expect: "<5 bytes>" });
    expect(JSON.stringify(inputs)).not.toContain("typed.txt");
    await settle(`${s.m}/x?stop=${String(shell.pid)}`);
  });

  it("lists the session's processes and reads raw bytes by offset without splitting a character", async () => {
    const shell = await start(`printf 'caf\\303\\251 ok\\n'; sleep 30`);
    // The operator sees its screen read-only through the control API.
    const operator = await t.api<Array<Record<string, unknown>>>("GET", `/api/terminals?sessionId=${s.sessionId}`);
    expect(operator.status).toBe(200);
    expect(operator.body).toEqual(
      expect.arrayContaining([expect.objectContaining({ pid: shell.pid, screen: expect.stringContaining("café ok") })]),
    );
    const list = await agentGet<Body>(`${s.m}/m`);
    expect(list.processes).toEqual(
      expect.arrayContaining([expect.objectContaining({ pid: shell.pid, kind: "pty", processState: "running" })]),
    );
    // 4 bytes end inside the two-byte é: the page stops before it, and the next page starts with it.
    const head = await agentGet<Body>(`${s.m}/m?pid=${String(shell.pid)}&offset=0&limit=4`);
    expect(head).toMatchObject({ mode: "raw", offset: 0, nextOffset: 3, lostBytes: 0, text: "caf" });
    const rest = await agentGet<Body>(String(head.more));
    expect(rest, JSON.stringify(rest)).toMatchObject({ offset: 3, lostBytes: 0 });
    expect(rest.text).toBe("é o");
    await settle(`${s.m}/x?stop=${String(shell.pid)}`);
  });
});

describe("pty=1 bounds", () => {
  it("refuses a fifth PTY in one session with pty_limit_reached, naming the running ones", async () => {
    const own = await t.session({ terminal: true, name: "pty-cap" });
    const pids: unknown[] = [];
    // Each start its own intent (run=): the same URL again would answer the first start.
    for (let i = 0; i < 4; i++) pids.push((await settle(`${own.m}/x?pty=1&run=cap-${i}&raw=cat`)).pid);
    expect(new Set(pids).size).toBe(4);
    const fifth = await settle(`${own.m}/x?pty=1&run=cap-4&raw=cat`);
    expect(fifth).toMatchObject({ ok: false, errorCode: "pty_limit_reached", retryable: true });
    expect((fifth.errorDetail as { running: Array<{ pid: unknown }> }).running.map((r) => r.pid).sort()).toEqual(
      [...pids].sort(),
    );
    for (const pid of pids) await settle(`${own.m}/x?stop=${String(pid)}`);
  });

  it("reports its bounds in /api/health and ends a PTY nobody used for the idle time", async () => {
    const idle = await startTestBridge({ URLBRIDGE_PTY_IDLE_MS: "1000" });
    try {
      const health = (await (await fetch(`${idle.bridge.controlUrl}/api/health`)).json()) as Body;
      expect(health.limits).toMatchObject({
        pty: { perSession: 4, perBridge: 16, replayBytesPerProcess: 1024 * 1024, idleEndMs: 1000 },
      });
      const agent = await idle.session({ terminal: true });
      const started = await settle(`${agent.m}/x?pty=1&raw=cat`);
      expect(started).toMatchObject({ ok: true, processState: "running" });
      const deadline = Date.now() + 15_000;
      let view = await agentGet<Body>(`${agent.m}/m`);
      while (Date.now() < deadline && (view.processes as Body[])[0]?.processState === "running") {
        await new Promise((resolve) => setTimeout(resolve, 200));
        view = await agentGet<Body>(`${agent.m}/m`);
      }
      expect(view.processes).toEqual([expect.objectContaining({ pid: started.pid, endReason: "idle" })]);
    } finally {
      await idle.close();
    }
  });
});
