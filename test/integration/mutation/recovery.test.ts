// Start-up recovery of intents a previous process left unfinished, prepared directly in a real state file
// and settled by a real bridge start.
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fingerprintBytes } from "../../../server/kernel/read/read-coverage.js";
import { openStore } from "../../../server/store/index.js";
import { makeTempDir, startTestBridge, type TestBridge, writeAsAgent } from "../../helpers/bridge.js";

const open: TestBridge[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((t) => t.close()));
});

interface Left {
  callId: string;
  tool: string;
  state: "pending" | "running";
  checkpoint?: unknown;
}

/** Writes a project, a session and unfinished intents into a fresh state directory, as a killed process would. */
function leaveIntents(root: string, intents: Left[]): string {
  const stateDir = makeTempDir("recovery-state");
  const store = openStore(stateDir);
  store.projects.insert({ id: "p1", name: "p1", root, write: true, terminal: true });
  store.sessions.insert({ id: "s1", projectId: "p1", name: "s1", enabled: true, generation: 1 });
  for (const intent of intents) {
    const { row } = store.journal.admit({
      sessionId: "s1",
      generation: 1,
      projectId: "p1",
      projectRoot: root,
      callId: intent.callId,
      tool: intent.tool,
      argsHash: "h",
      createdAt: Date.now(),
    });
    if (intent.state === "running") store.journal.markRunning(row.id, Date.now());
    if (intent.checkpoint !== undefined) store.journal.saveCheckpoint(row.id, intent.checkpoint);
  }
  store.close();
  return stateDir;
}

describe("start-up recovery", () => {
  it("settles write/edit intents by the file's fingerprint, and never re-runs anything", async () => {
    const root = makeTempDir("recovery-project");
    const file = (n: string) => path.join(root, n);
    writeAsAgent(file("landed.txt"), "new");
    writeAsAgent(file("not-landed.txt"), "old");
    writeAsAgent(file("changed.txt"), "someone else");
    writeAsAgent(file(".not-landed.txt.0123456789ab.urlbridge-tmp"), "half");
    const cp = (name: string) => ({
      path: file(name),
      before: fingerprintBytes(Buffer.from("old")),
      after: fingerprintBytes(Buffer.from("new")),
    });
    const stateDir = leaveIntents(root, [
      { callId: "w-landed", tool: "write", state: "running", checkpoint: cp("landed.txt") },
      { callId: "w-not", tool: "write", state: "running", checkpoint: cp("not-landed.txt") },
      { callId: "e-changed", tool: "edit", state: "running", checkpoint: cp("changed.txt") },
      { callId: "e-early", tool: "edit", state: "running" },
      { callId: "x-run", tool: "terminal", state: "running" },
      { callId: "x-wait", tool: "terminal", state: "pending" },
    ]);
    const t = await startTestBridge({}, { stateDir });
    open.push(t);
    const record = (callId: string) => t.bridge.store.journal.find("s1", 1, callId)!;

    expect(record("w-landed")).toMatchObject({
      state: "succeeded",
      result: { ok: true, path: "/project/landed.txt", recovered: true },
    });
    expect(record("w-not")).toMatchObject({
      state: "failed",
      result: { errorCode: "interrupted", errorDetail: { applied: false, path: "/project/not-landed.txt" } },
    });
    expect(record("e-changed")).toMatchObject({
      state: "failed",
      result: { errorCode: "interrupted", errorDetail: { applied: "unknown" } },
    });
    expect(record("e-early")).toMatchObject({
      state: "failed",
      result: { errorCode: "interrupted", errorDetail: { applied: false } },
    });
    expect(record("x-run")).toMatchObject({
      state: "failed",
      result: { errorCode: "interrupted", errorDetail: { phase: "running", started: true } },
    });
    expect(record("x-wait")).toMatchObject({
      state: "failed",
      result: { errorCode: "interrupted", errorDetail: { phase: "pending", started: false } },
    });
    expect(fs.readFileSync(file("not-landed.txt"), "utf8")).toBe("old");
    expect(fs.readdirSync(root).sort()).toEqual(["changed.txt", "landed.txt", "not-landed.txt"]);
    expect(t.bridge.store.journal.unfinished()).toEqual([]);
  });

  it("makes what it settled durable before listening, and a start with nothing to settle fsyncs nothing", async () => {
    // The closing fsync used to come on every start, and the planes waited for it (issue 34).
    const root = makeTempDir("recovery-project");
    const settled = await startTestBridge(
      {},
      { stateDir: leaveIntents(root, [{ callId: "x", tool: "terminal", state: "pending" }]) },
    );
    open.push(settled);
    expect(settled.bridge.store.journal.find("s1", 1, "x")).toMatchObject({ state: "failed" });
    expect(settled.bridge.store.journalSync.syncs).toBe(1);

    const quiet = await startTestBridge({}, { stateDir: leaveIntents(root, []) });
    open.push(quiet);
    expect(quiet.bridge.store.journalSync.syncs).toBe(0);
  });
});

describe("journal retention", () => {
  it("keeps the newest full records per session generation, tombstones older ones and drops rows of generations left by rotation", () => {
    const stateDir = makeTempDir("retention-state");
    const store = openStore(stateDir);
    try {
      store.projects.insert({ id: "p1", name: "p1", root: "/tmp", write: true, terminal: false });
      store.sessions.insert({ id: "s1", projectId: "p1", name: "s1", enabled: true, generation: 2 });
      const finished = (generation: number, callId: string, at: number) => {
        const { row } = store.journal.admit({
          sessionId: "s1",
          generation,
          projectId: "p1",
          projectRoot: "/tmp",
          callId,
          tool: "write",
          argsHash: "h",
          createdAt: at,
        });
        store.journal.finish(row.id, "succeeded", { ok: true }, 0, at);
      };
      finished(1, "old-generation", 1);
      for (let i = 0; i < 5; i++) finished(2, `c${i}`, 100 + i);
      const running = store.journal.admit({
        sessionId: "s1",
        generation: 2,
        projectId: "p1",
        projectRoot: "/tmp",
        callId: "busy",
        tool: "write",
        argsHash: "h",
        createdAt: 1,
      });
      expect(store.journal.pruneLeftGenerations()).toBe(1);
      store.journal.prune({ finishedBefore: 0, sessionId: "s1", generation: 2, keep: 2 });
      const full = ["c0", "c1", "c2", "c3", "c4", "busy"].filter(
        (c) => store.journal.find("s1", 2, c)?.result !== undefined,
      );
      expect(full).toEqual(["c3", "c4"]);
      // Older records stay as tombstones: identity, tool, outcome and time, without the result.
      for (const c of ["c0", "c1", "c2"])
        expect(store.journal.find("s1", 2, c)).toMatchObject({
          state: "succeeded",
          result: undefined,
          finishedAt: 100 + Number(c.slice(1)),
        });
      expect(store.journal.prune({ finishedBefore: 104 })).toBe(1);
      expect(store.journal.find("s1", 2, "c3")).toMatchObject({ state: "succeeded", result: undefined });
      // Tombstones are bounded too: beyond keepTombstones the oldest identities are forgotten.
      store.journal.prune({ finishedBefore: 0, sessionId: "s1", generation: 2, keepTombstones: 2 });
      expect(["c0", "c1", "c2", "c3"].filter((c) => store.journal.find("s1", 2, c) !== undefined)).toEqual([
        "c2",
        "c3",
      ]);
      expect(store.journal.find("s1", 2, "busy")).toMatchObject({ state: "pending", id: running.row.id });
    } finally {
      store.close();
    }
  });
});
