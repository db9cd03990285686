// The journal's typed queries (server/store/journal.ts) on a real state file: the row admission builds without
// reading it back is the row a read returns, a file tool's start commits with its checkpoint, and outcomes
// recorded unconfirmed are listed until confirmed.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";

describe("journal queries", () => {
  let t: TestBridge;
  let s: AgentSession;
  let n = 0;
  beforeAll(async () => {
    t = await startTestBridge();
    s = await t.session({ write: true, terminal: false });
  });
  afterAll(async () => t.close());
  const admit = (callId = `auto:edit:q${n++}`) =>
    t.bridge.store.journal.admit({
      sessionId: s.sessionId,
      generation: 1,
      projectId: s.projectId,
      projectRoot: t.projectDir,
      callId,
      tool: "edit",
      argsHash: "h",
      createdAt: 1_700_000_000_000,
    });

  it("answers a new admission with exactly the row a read of it returns", () => {
    const admitted = admit("auto:edit:fresh");
    expect(admitted.inserted).toBe(true);
    expect(admitted.row).toEqual(t.bridge.store.journal.find(s.sessionId, 1, "auto:edit:fresh"));
    expect(admitted.row).toEqual(t.bridge.store.journal.get(admitted.row.id));
  });

  it("answers an admission of a known call id with the recorded row, not a new one", () => {
    const first = admit("auto:edit:twice");
    t.bridge.store.journal.markRunning(first.row.id, 5);
    const again = admit("auto:edit:twice");
    expect(again).toEqual({ inserted: false, row: { ...first.row, state: "running", startedAt: 5 } });
  });

  it("starts a pending intent with its checkpoint in one transaction, and never restarts a running one", () => {
    const { row } = admit();
    t.bridge.store.journal.startWithCheckpoint(row.id, { path: "/x", before: null, after: "f" }, 10);
    expect(t.bridge.store.journal.get(row.id)).toMatchObject({
      state: "running",
      startedAt: 10,
      checkpoint: { path: "/x", before: null, after: "f" },
    });
    t.bridge.store.journal.startWithCheckpoint(row.id, { second: true }, 20);
    expect(t.bridge.store.journal.get(row.id)).toMatchObject({
      state: "running",
      startedAt: 10,
      checkpoint: { second: true },
    });
  });

  it("starts a pending intent with its preimages when asked to, and leaves the start alone otherwise", () => {
    const { row } = admit();
    t.bridge.store.journal.savePreimages(row.id, [{ path: "/a", kind: "absent" }]);
    expect(t.bridge.store.journal.get(row.id)).toMatchObject({ state: "pending", startedAt: null });
    t.bridge.store.journal.savePreimages(
      row.id,
      [
        { path: "/a", kind: "absent" },
        { path: "/b", kind: "absent" },
      ],
      30,
    );
    expect(t.bridge.store.journal.get(row.id)).toMatchObject({ state: "running", startedAt: 30 });
    expect(t.bridge.store.journal.preimages(row.id).map((p) => p.path)).toEqual(["/a", "/b"]);
  });

  it("lists an outcome recorded unconfirmed until it is confirmed", () => {
    const { row } = admit();
    t.bridge.store.journal.finish(row.id, "succeeded", { ok: true }, 1, 40, true);
    const confirmed = admit();
    t.bridge.store.journal.finish(confirmed.row.id, "succeeded", { ok: true }, 1, 40);
    expect(t.bridge.store.journal.unconfirmed().map((r) => r.id)).toEqual([row.id]);
    t.bridge.store.journal.confirm(row.id);
    expect(t.bridge.store.journal.unconfirmed()).toEqual([]);
    expect(t.bridge.store.journal.get(row.id)).toMatchObject({ state: "succeeded", result: { ok: true } });
  });
});
