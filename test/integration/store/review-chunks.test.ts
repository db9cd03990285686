// The review record's large contents in chunks (store/changes.ts stageAhead, migration 011): staged a sealed slice
// a turn before the record's transaction, which only names them; nothing a crash or a failed record leaves behind
// is visible, and what it leaves is dropped (by discardStaged, or the start-up sweep). Real state files, a real
// process killed between chunk writes, and a real bridge start.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { SEAL_SLICE_BYTES } from "../../../server/store/capability-key.js";
import { contentHash, type ChangeAuthor, type NewFileChange } from "../../../server/store/changes.js";
import { STATE_FILE_NAME } from "../../../server/store/database.js";
import { openStore, type Store } from "../../../server/store/index.js";
import { makeTempDir, startTestBridge, type TestBridge } from "../../helpers/bridge.js";

const ROOT = path.resolve(import.meta.dirname, "../../..");
const STAGER = path.join(import.meta.dirname, "review-chunk-stager.ts");
const LARGE = 3 * SEAL_SLICE_BYTES + 1234;

const stores: Store[] = [];
const bridges: TestBridge[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) s.close();
  await Promise.all(bridges.splice(0).map((b) => b.close()));
});

function storeWithSession(stateDir = makeTempDir("chunks-state")): Store {
  const store = openStore(stateDir);
  stores.push(store);
  store.projects.insert({ id: "p1", name: "p1", root: "/project", write: true, terminal: true });
  store.sessions.insert({ id: "s1", projectId: "p1", name: "s1", enabled: true, generation: 1 });
  return store;
}

function authorOf(intentId: number): ChangeAuthor {
  const callId = `call-${intentId}`;
  return { sessionId: "s1", generation: 1, projectId: "p1", projectRoot: "/project", intentId, callId, tool: "e" };
}

const count = (store: Store, table: string) =>
  (store.db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;

describe("review contents staged in chunks", () => {
  it("stores a large side as chunks named by its blob, and opens it whole", async () => {
    const store = storeWithSession();
    const before = randomBytes(LARGE);
    const after = randomBytes(LARGE);
    const staged = await store.changes.stageAhead([
      { path: "/project/a", before: { mode: 0o644, content: before }, after: { content: after } },
    ]);
    store.changes.record(authorOf(1), staged, Date.now());
    // Four slices a side: three whole and a partial one.
    expect(count(store, "review_blob_chunks")).toBe(8);
    const [row] = store.changes.ofIntent("s1", "call-1");
    expect(row!.before?.hash).toBe(contentHash(before));
    expect(store.changes.blob(row!.before!.hash)?.equals(before)).toBe(true);
    expect(store.changes.blob(row!.after!.hash)?.equals(after)).toBe(true);
    // The blob row holds only the seal's iv and tag; the chunks are sealed, not the content in the clear.
    const stored = store.db.prepare("SELECT length(content) AS n FROM review_blobs").all() as Array<{ n: number }>;
    expect(stored.map((r) => r.n)).toEqual([28, 28]);
    const chunks = store.db.prepare("SELECT content FROM review_blob_chunks").pluck().all() as Buffer[];
    expect(chunks.some((c) => c.includes(after.subarray(0, 64)))).toBe(false);
  });

  it("does not stage again a content the record already holds", async () => {
    const store = storeWithSession();
    const content = randomBytes(LARGE);
    store.changes.record(authorOf(1), await store.changes.stageAhead([{ path: "/project/a", after: { content } }]), 1);
    const chunks = count(store, "review_blob_chunks");
    const again = await store.changes.stageAhead([{ path: "/project/b", after: { content } }]);
    expect(again[0]!.after!.staged).toBeUndefined();
    store.changes.record(authorOf(2), again, 2);
    expect(count(store, "review_blob_chunks")).toBe(chunks);
    expect(store.changes.blob(contentHash(content))?.equals(content)).toBe(true);
  });

  it("drops a staging's chunks when another recorded the same content first", async () => {
    const store = storeWithSession();
    const content = randomBytes(LARGE);
    // Both staged before either records: the second record finds the blob there and drops its own chunks.
    const first = await store.changes.stageAhead([{ path: "/project/a", after: { content } }]);
    const second = await store.changes.stageAhead([{ path: "/project/b", after: { content } }]);
    expect(count(store, "review_blob_chunks")).toBe(8);
    store.changes.record(authorOf(1), first, 1);
    store.changes.record(authorOf(2), second, 2);
    expect(count(store, "review_blob_chunks")).toBe(4);
    expect(store.changes.blob(contentHash(content))?.equals(content)).toBe(true);
  });

  it("discards the chunks of changes never recorded, never those a recorded blob names", async () => {
    const store = storeWithSession();
    const kept = await store.changes.stageAhead([{ path: "/project/a", after: { content: randomBytes(LARGE) } }]);
    store.changes.record(authorOf(1), kept, 1);
    const dropped = await store.changes.stageAhead([{ path: "/project/b", after: { content: randomBytes(LARGE) } }]);
    expect(count(store, "review_blob_chunks")).toBe(8);
    store.changes.discardStaged([...kept, ...dropped]);
    expect(count(store, "review_blob_chunks")).toBe(4);
    expect(store.changes.blob(kept[0]!.after!.hash!)?.equals(kept[0]!.after!.content)).toBe(true);
  });

  it("lets a blob's chunks go with it when the record's budget drops its detail", async () => {
    const store = storeWithSession();
    const staged = await store.changes.stageAhead([{ path: "/project/a", after: { content: randomBytes(LARGE) } }]);
    store.changes.record(authorOf(1), staged, 1);
    store.changes.settle(1, true);
    store.changes.prune({ detailBefore: 0, maxBytes: 0, forgetBefore: 0 });
    expect(count(store, "review_blobs")).toBe(0);
    expect(count(store, "review_blob_chunks")).toBe(0);
  });

  it("stores one chunk per event-loop turn: other callbacks run between them", async () => {
    const store = storeWithSession();
    const content = randomBytes(8 * SEAL_SLICE_BYTES);
    let turns = 0;
    let counting = true;
    const tick = () => {
      if (!counting) return;
      turns += 1;
      setImmediate(tick);
    };
    setImmediate(tick);
    const staged: NewFileChange[] = await store.changes.stageAhead([{ path: "/project/a", after: { content } }]);
    counting = false;
    expect(count(store, "review_blob_chunks")).toBe(8);
    expect(turns).toBeGreaterThanOrEqual(7);
    store.changes.discardStaged(staged);
  });

  it("leaves nothing visible when the process dies between chunk writes, and the next start sweeps them", async () => {
    const stateDir = makeTempDir("chunks-crash");
    storeWithSession(stateDir).close();
    stores.length = 0;
    const child = spawn(process.execPath, ["--import", "tsx", STAGER, stateDir, String(128 * SEAL_SLICE_BYTES)], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "inherit"],
    });
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    // Killed (SIGKILL: no cleanup of any kind) as soon as its first chunks are committed.
    const watcher = new Database(path.join(stateDir, STATE_FILE_NAME), { readonly: true });
    const chunksNow = () => (watcher.prepare("SELECT COUNT(*) AS n FROM review_blob_chunks").get() as { n: number }).n;
    try {
      while (chunksNow() === 0 && child.exitCode === null) await new Promise((r) => setTimeout(r, 5));
      child.kill("SIGKILL");
      await exited;
      expect(output).not.toContain("staged");
      expect(chunksNow()).toBeGreaterThan(0);
    } finally {
      watcher.close();
    }
    // Nothing the review record shows: no blob, no change, no bytes counted against its budget.
    const before = openStore(stateDir);
    expect(count(before, "review_blobs")).toBe(0);
    expect(before.changes.usage()).toEqual({ changes: 0, dropped: 0, bytes: 0 });
    before.close();
    // A bridge start sweeps them.
    bridges.push(await startTestBridge({}, { stateDir }));
    const after = new Database(path.join(stateDir, STATE_FILE_NAME), { readonly: true });
    try {
      expect((after.prepare("SELECT COUNT(*) AS n FROM review_blob_chunks").get() as { n: number }).n).toBe(0);
    } finally {
      after.close();
    }
  });
});
