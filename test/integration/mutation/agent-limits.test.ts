// Issue 28's agent limits through a real bridge and real processes: agents are the OOM killer's first pick, a
// session past its memory budget has its own processes ended (and no other session's) with a clear answer, no
// file an agent writes passes the file-size limit, and the project growth budget stops the file tools and the
// terminal of the session that passed it.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeUrlText } from "../../../server/url-grammar/encode.js";
import { agentGet, makeTempDir, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";
import { patchText, url } from "./fixtures.js";
import { settle, waitUntil, type Body } from "./terminal-helpers.js";

const MIB = 1024 * 1024;
const SHM = "/dev/shm";
const shmIsTmpfs = fs.existsSync(SHM) && fs.statfsSync(SHM).type === 0x01021994;
const run = (s: AgentSession, command: string) => settle(`${s.m}/x?raw=${encodeUrlText(command)}`);

describe("the memory budget and the OOM order", () => {
  let t: TestBridge;
  let hog: AgentSession;
  let neighbour: AgentSession;
  let hogRoot: string;

  beforeAll(async () => {
    t = await startTestBridge({ URLBRIDGE_AGENT_MEMORY_MB: "96", URLBRIDGE_AGENT_MAX_FILE_MB: "1" });
    hogRoot = makeTempDir("hog");
    hog = await t.session({ terminal: true, write: true, root: hogRoot, name: "hog" });
    neighbour = await t.session({ terminal: true, root: makeTempDir("neighbour"), name: "neighbour" });
  });
  afterAll(async () => t.close());

  it("reports the limits in /api/health", async () => {
    const health = (await (await fetch(`${t.bridge.controlUrl}/api/health`)).json()) as { agentLimits: unknown };
    expect(health.agentLimits).toMatchObject({
      oom: { agents: 1000 },
      memory: { budgetBytes: 96 * MIB, enforcement: "watchdog" },
      maxFileBytes: 1 * MIB,
      growthBudgetBytes: 2048 * MIB,
    });
  });

  it("starts every agent process at oom_score_adj 1000, whatever the bridge's own", async () => {
    const body = await run(hog, "cat /proc/self/oom_score_adj; sh -c 'cat /proc/self/oom_score_adj'");
    expect(body).toMatchObject({ ok: true, stdout: "1000\n1000\n" });
  });

  it("stops a file an agent writes at the file-size limit", async () => {
    const body = await run(hog, "head -c 3000000 /dev/zero > big.bin; echo status=$?");
    expect(body.ok).toBe(true);
    expect(String(body.stdout)).not.toContain("status=0");
    expect(fs.statSync(path.join(hogRoot, "big.bin")).size).toBe(1 * MIB);
  });

  it("ends only the session past its budget, and tells it why", async () => {
    const sleeper = await agentGet<Body>(`${neighbour.m}/x?bg=1&raw=${encodeUrlText("sleep 60")}`);
    expect(sleeper).toMatchObject({ ok: true, processState: "running" });
    const hogCommand =
      'node -e "const b = Buffer.alloc(256 * 2 ** 20, 1); setTimeout(() => console.log(b.length), 30000)"';
    const body = await run(hog, hogCommand);
    expect(body).toMatchObject({
      ok: false,
      errorCode: "memory_budget_exceeded",
      retryable: false,
      errorDetail: { started: true, budgetBytes: 96 * MIB },
    });
    expect((body.errorDetail as { processBytes: number }).processBytes).toBeGreaterThan(96 * MIB);
    expect(String(body.repairHint)).toContain("URLBRIDGE_AGENT_MEMORY_MB");
    expect(await waitUntil(() => t.bridge.terminal.processes.list({ sessionId: hog.sessionId }).length === 0)).toBe(
      true,
    );
    // The neighbour's process was never the one ended.
    expect(t.bridge.terminal.processes.list({ sessionId: neighbour.sessionId })).toHaveLength(1);
    expect(await run(neighbour, "echo still-served")).toMatchObject({ ok: true, stdout: "still-served\n" });
    await agentGet(String(sleeper.stop));
  });
});

describe("the project growth budget", () => {
  let t: TestBridge;
  let s: AgentSession;
  let root: string;

  beforeAll(async () => {
    t = await startTestBridge({ URLBRIDGE_SESSION_GROWTH_MB: "8" });
    // A file system of its own where there is one: the terminal is measured by its free space, which other
    // processes writing to the shared temp disk would move too.
    root = shmIsTmpfs ? fs.mkdtempSync(path.join(SHM, "urlbridge-growth-")) : makeTempDir("growth");
    s = await t.session({ terminal: true, write: true, root, name: "growth" });
  });
  afterAll(async () => {
    await t.close();
    if (root.startsWith(SHM)) fs.rmSync(root, { recursive: true, force: true });
  });

  it("refuses a file tool's change past the budget and gives room back for a deletion", async () => {
    fs.writeFileSync(path.join(root, "old.txt"), "x".repeat(4096));
    // What the session added before (counted as the file tools count it): 10 bytes short of the budget.
    t.bridge.terminal.growth.recordWrite(s.sessionId, 8 * MIB - 10);
    const refused = await agentGet<Body>(`${s.m}/w?path=new.txt&raw=${"y".repeat(100)}`);
    expect(refused).toMatchObject({
      ok: false,
      errorCode: "growth_budget_exceeded",
      errorDetail: { budgetBytes: 8 * MIB, addedBytes: 8 * MIB - 10, delta: 100 },
    });
    expect(String(refused.repairHint)).toContain("URLBRIDGE_SESSION_GROWTH_MB");
    expect(fs.existsSync(path.join(root, "new.txt"))).toBe(false);
    expect(await agentGet<Body>(url(s.m!, "a", [], patchText("*** Delete File: old.txt")))).toMatchObject({ ok: true });
    // A new URL: the refused one replays its recorded answer.
    expect(await agentGet<Body>(`${s.m}/w?path=new.txt&raw=${"z".repeat(100)}`)).toMatchObject({ ok: true });
    expect(t.bridge.terminal.growth.addedBy(s.sessionId)).toBe(8 * MIB - 10 - 4096 + 100);
    // The operator sees the same count on the session's card.
    const sessions = await t.api<Array<{ id: string; growth?: unknown }>>("GET", "/api/sessions");
    expect(sessions.body.find((v) => v.id === s.sessionId)?.growth).toEqual({
      addedBytes: 8 * MIB - 10 - 4096 + 100,
      budgetBytes: 8 * MIB,
    });
    t.bridge.terminal.growth.recordWrite(s.sessionId, -t.bridge.terminal.growth.addedBy(s.sessionId));
  });

  it("stops the terminal of a session whose commands pass it, until it is back under", async () => {
    const crossed = await run(s, "head -c 20000000 /dev/zero > big.bin; echo wrote");
    expect(crossed).toMatchObject({
      ok: false,
      errorCode: "growth_budget_exceeded",
      errorDetail: { started: true, budgetBytes: 8 * MIB },
    });
    // Measured at the command's end, or by a pass while it ran (which ended it before its echo).
    expect((crossed.errorDetail as { addedBytes: number }).addedBytes).toBeGreaterThan(8 * MIB);
    expect(["wrote\n", ""]).toContain(crossed.stdout);
    expect(await run(s, "echo refused")).toMatchObject({
      ok: false,
      errorCode: "growth_budget_exceeded",
      errorDetail: { started: false },
    });
    expect(await agentGet<Body>(url(s.m!, "a", [], patchText("*** Delete File: big.bin")))).toMatchObject({ ok: true });
    expect(await run(s, "echo again")).toMatchObject({ ok: true, stdout: "again\n" });
  });
});
