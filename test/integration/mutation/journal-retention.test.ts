import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JOURNAL_MAX_RECORDS_PER_SESSION, JOURNAL_RETENTION_MS } from "../../../server/mutation/journal/retention.js";
import { agentGet, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";
import { url } from "./fixtures.js";

type Body = Record<string, unknown> & { ok: boolean; errorCode?: string; callId?: string };

/** Prune runs once every 200 admissions (server/mutation/journal/retention.ts); this many real mutations always reach one. */
const ADMISSIONS_TO_PRUNE = 200;

describe("exactly-once past retention", () => {
  let t: TestBridge;
  let s: AgentSession;
  let clock = Date.UTC(2026, 0, 1);
  const ran = () => fs.readFileSync(path.join(t.projectDir, "ran.txt"), "utf8").split("\n").filter(Boolean);

  beforeAll(async () => {
    t = await startTestBridge({}, { now: () => clock });
    s = await t.session({ write: true, terminal: true });
  });
  afterAll(async () => t.close());

  async function mutateMany(tag: string, count: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      const body = await agentGet<Body>(url(s.m!, "w", [["path", `fill/${tag}-${i}.txt`]], "x"));
      expect(body.ok).toBe(true);
    }
  }

  it("answers a terminal replay after more than 2,000 newer intents with a tombstone and does not run it again", async () => {
    const command = url(s.m!, "x", [], "echo count-run >> ran.txt");
    const first = await agentGet<Body>(command);
    expect(first).toMatchObject({ ok: true, state: "succeeded" });
    const row = t.bridge.store.journal.find(s.sessionId, 1, first.callId!)!;
    expect(row).toBeDefined();
    // History the session made since: 2,000 finished intents recorded as the journal records them...
    t.bridge.store.transaction(() => {
      for (let i = 0; i < JOURNAL_MAX_RECORDS_PER_SESSION + 50; i++) {
        const { row: filler } = t.bridge.store.journal.admit({
          sessionId: s.sessionId,
          generation: row.generation,
          projectId: s.projectId,
          projectRoot: row.projectRoot,
          callId: `auto:write:filler${i}`,
          tool: "write",
          argsHash: `h${i}`,
          createdAt: clock,
        });
        t.bridge.store.journal.finish(filler.id, "succeeded", { ok: true }, null, clock);
      }
    });
    // ...and real ones through the data plane, enough to reach the periodic prune.
    await mutateMany("a", ADMISSIONS_TO_PRUNE);

    const replay = await agentGet<Body>(command);
    expect(replay).toMatchObject({
      ok: false,
      errorCode: "intent_result_expired",
      retryable: false,
      dedupe: "replayed",
      callId: first.callId,
      state: "succeeded",
      errorDetail: { tool: "terminal", outcome: "succeeded" },
    });
    expect(typeof replay.retry).toBe("string");
    expect(ran()).toEqual(["count-run"]);
    // /j answers the same tombstone.
    expect(await agentGet<Body>(url(s.m!, "j", [["call", first.callId!]]))).toMatchObject({
      errorCode: "intent_result_expired",
    });
    // The retry URL runs it again on purpose, exactly once.
    expect(await agentGet<Body>(replay.retry as string)).toMatchObject({ ok: true });
    expect(await agentGet<Body>(replay.retry as string)).toMatchObject({ ok: true, dedupe: "replayed" });
    expect(ran()).toEqual(["count-run", "count-run"]);
  });

  it("answers a replay after the retention window (injected clock) with a tombstone and does not run it again", async () => {
    const command = url(s.m!, "x", [], "echo window-run >> ran.txt");
    expect(await agentGet<Body>(command)).toMatchObject({ ok: true });
    const before = ran().length;
    clock += JOURNAL_RETENTION_MS + 60_000;
    await mutateMany("b", ADMISSIONS_TO_PRUNE);
    const replay = await agentGet<Body>(command);
    expect(replay).toMatchObject({
      ok: false,
      errorCode: "intent_result_expired",
      errorDetail: { outcome: "succeeded" },
    });
    expect(ran()).toHaveLength(before);
  });
});
