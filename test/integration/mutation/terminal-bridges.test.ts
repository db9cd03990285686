// Two bridges in one process (as tests run them) own separate terminal state: one bridge's full gate neither
// queues nor refuses the other's commands, and each registry holds only its own bridge's trees.
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeUrlText } from "../../../server/url-grammar/encode.js";
import { agentGet, startTestBridge, type AgentSession, type TestBridge, writeAsAgent } from "../../helpers/bridge.js";
import { settle, waitUntil, type Body } from "./terminal-helpers.js";

let busy: TestBridge;
let idle: TestBridge;
let holder: AgentSession;
let other: AgentSession;
const release = () => writeAsAgent(path.join(busy.projectDir, "release"), "");

beforeAll(async () => {
  [busy, idle] = await Promise.all([startTestBridge(), startTestBridge()]);
  holder = await busy.session({ terminal: true });
  other = await idle.session({ terminal: true });
});

afterAll(async () => {
  release();
  await Promise.all([busy.close(), idle.close()]);
});

describe("terminal state per bridge", () => {
  it("runs a command on one bridge at once while the other's gate is full", async () => {
    expect(busy.bridge.terminal.gate).not.toBe(idle.bridge.terminal.gate);
    expect(busy.bridge.terminal.processes).not.toBe(idle.bridge.terminal.processes);
    // Two different commands: the same URL twice would join one intent.
    const blocked = (n: number) => encodeUrlText(`while [ ! -f release ]; do sleep 0.05; done; echo held-${n}`);
    const holders = [
      await agentGet<Body>(`${holder.m}/x?wait=0&raw=${blocked(1)}`),
      await agentGet<Body>(`${holder.m}/x?wait=0&raw=${blocked(2)}`),
    ];
    expect(await waitUntil(() => busy.bridge.terminal.gate.snapshot().running === 2)).toBe(true);
    const queued = await agentGet<Body>(`${holder.m}/x?wait=0&raw=echo+queued`);
    expect(await waitUntil(() => busy.bridge.terminal.gate.snapshot().queued === 1)).toBe(true);
    expect(busy.bridge.terminal.processes.list({ kind: "foreground" })).toHaveLength(2);

    expect(await settle(`${other.m}/x?raw=echo+free`)).toMatchObject({ ok: true, exitCode: 0, stdout: "free\n" });
    expect(idle.bridge.terminal.gate.snapshot()).toMatchObject({ running: 0, queued: 0 });
    expect(idle.bridge.terminal.processes.list()).toEqual([]);
    expect(busy.bridge.terminal.gate.snapshot()).toMatchObject({ running: 2, queued: 1 });

    release();
    const done = await Promise.all([...holders, queued].map((body) => settle(String(body.poll))));
    expect(done.map((r) => r.stdout)).toEqual(["held-1\n", "held-2\n", "queued\n"]);
  });
});
