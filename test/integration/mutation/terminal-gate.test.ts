// A bridge's terminal gate through the gateway: two foreground commands from different sessions hold
// the slots, a third waits as a pending intent and runs only after a slot frees, and an overfull queue refuses.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_QUEUED_FOREGROUND } from "../../../server/mutation/terminal/terminal-gate.js";
import { encodeUrlText } from "../../../server/url-grammar/encode.js";
import {
  agentGet,
  makeTempDir,
  startTestBridge,
  type AgentSession,
  type TestBridge,
  writeAsAgent,
} from "../../helpers/bridge.js";
import { settle, waitUntil, type Body } from "./terminal-helpers.js";

let t: TestBridge;
let sessions: AgentSession[];
const roots = ["a", "b", "c"].map((name) => makeTempDir(`gate-${name}`));
// The barrier lives inside every project: a sandboxed command sees nothing outside its own root.
const release = "release";
const setReleased = (on: boolean) => {
  for (const root of roots) {
    if (on) writeAsAgent(path.join(root, release), "");
    else fs.rmSync(path.join(root, release), { force: true });
  }
};

beforeAll(async () => {
  t = await startTestBridge();
  sessions = [];
  for (const [i, name] of ["a", "b", "c"].entries())
    sessions.push(await t.session({ terminal: true, root: roots[i]!, name }));
});

afterAll(async () => {
  setReleased(true);
  await t.close();
});

/** A foreground command that holds its slot until the test creates the release file. */
const blocked = (label: string) => encodeUrlText(`while [ ! -f ${release} ]; do sleep 0.05; done; echo ${label}`);

async function pollUntil(body: Body, accept: (b: Body) => boolean): Promise<Body> {
  let current = body;
  for (let i = 0; i < 60 && !accept(current); i++)
    current = await agentGet<Body>(`${String(body.poll).replace(/wait=\d+/, "wait=200")}`);
  return current;
}

describe("terminal gate", () => {
  it("runs two foreground commands across sessions; a third waits pending and runs when a slot frees", async () => {
    const [a, b, c] = sessions as [AgentSession, AgentSession, AgentSession];
    const first = await agentGet<Body>(`${a.m}/x?wait=0&raw=${blocked("one")}`);
    const second = await agentGet<Body>(`${b.m}/x?wait=0&raw=${blocked("two")}`);
    expect((await pollUntil(first, (r) => r.state === "running")).state).toBe("running");
    expect((await pollUntil(second, (r) => r.state === "running")).state).toBe("running");
    expect(t.bridge.terminal.gate.snapshot()).toMatchObject({ slots: 2, running: 2, queued: 0 });

    // The third proves by its exit code that it ran only after the release file existed.
    const third = await agentGet<Body>(`${c.m}/x?wait=0&raw=${encodeUrlText(`test -f ${release} && echo three`)}`);
    const queued = await pollUntil(third, (r) => (r.progress as { phase?: string } | undefined)?.phase === "queued");
    expect(queued).toMatchObject({ ok: true, state: "pending", progress: { phase: "queued", position: 1 } });
    expect(t.bridge.terminal.gate.snapshot()).toMatchObject({ running: 2, queued: 1 });
    const stillQueued = await agentGet<Body>(String(third.poll));
    expect(stillQueued.state).toBe("pending");

    setReleased(true);
    const results = await Promise.all([first, second, third].map((body) => settle(String(body.poll))));
    expect(results.map((r) => [r.ok, r.exitCode, r.stdout])).toEqual([
      [true, 0, "one\n"],
      [true, 0, "two\n"],
      [true, 0, "three\n"],
    ]);
    expect(await waitUntil(() => t.bridge.terminal.gate.snapshot().running === 0)).toBe(true);
    setReleased(false);
  });

  it("refuses with terminal_busy and a retry URL once the queue is full; the queued ones all run", async () => {
    const [a] = sessions as [AgentSession];
    const holders = [
      await agentGet<Body>(`${a.m}/x?wait=0&raw=${blocked("h1")}`),
      await agentGet<Body>(`${a.m}/x?wait=0&raw=${blocked("h2")}`),
    ];
    for (const holder of holders) expect((await pollUntil(holder, (r) => r.state === "running")).state).toBe("running");
    const waiting: Body[] = [];
    for (let i = 0; i < MAX_QUEUED_FOREGROUND; i++)
      waiting.push(await agentGet<Body>(`${a.m}/x?wait=0&raw=echo+queued-${i}`));
    expect(await waitUntil(() => t.bridge.terminal.gate.snapshot().queued === MAX_QUEUED_FOREGROUND)).toBe(true);

    const refused = await settle(`${a.m}/x?raw=echo+one-too-many`);
    expect(refused).toMatchObject({
      ok: false,
      state: "failed",
      errorCode: "terminal_busy",
      retryable: true,
      agentAction: "wait_and_retry",
    });
    expect(String(refused.retry)).toMatch(/\/x\?run=[A-Za-z0-9._:-]+&raw=echo\+one-too-many$/);

    setReleased(true);
    const done = await Promise.all([...holders, ...waiting].map((body) => settle(String(body.poll))));
    expect(done.every((r) => r.ok && r.exitCode === 0)).toBe(true);
    expect(done.slice(2).map((r) => r.stdout)).toEqual(
      Array.from({ length: MAX_QUEUED_FOREGROUND }, (_, i) => `queued-${i}\n`),
    );

    const retried = await settle(String(refused.retry));
    expect(retried).toMatchObject({ ok: true, stdout: "one-too-many\n" });
  });
});
