// WAL checkpoints in a worker thread (store/wal-checkpointer.ts): the event loop's connections never checkpoint,
// the worker copies the WAL into the database file, and should it fail the connections go back to SQLite's own.
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { workerEntry } from "../../../server/kernel/worker/worker-entry.js";
import { STATE_FILE_NAME, WAL_SIZE_LIMIT_BYTES } from "../../../server/store/database.js";
import { openStore, type Store } from "../../../server/store/index.js";
import { makeTempDir } from "../../helpers/bridge.js";
import { startSteadyReader } from "./steady-reader.js";

const STORE_DIR = path.resolve(import.meta.dirname, "../../../server/store");
const ENTRY = workerEntry(pathToFileURL(path.join(STORE_DIR, "index.ts")).href, "wal-checkpoint-worker");
const MiB = 1024 * 1024;

const stores: Store[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) {
    s.close();
    await s.closed();
  }
});

const autocheckpoint = (store: Store) => store.db.pragma("wal_autocheckpoint", { simple: true }) as number;
/** How many of this process's file descriptors are open on files under dir (Linux). */
const openFilesUnder = (dir: string) =>
  fs.readdirSync("/proc/self/fd").filter((fd) => {
    try {
      return fs.readlinkSync(`/proc/self/fd/${fd}`).startsWith(dir + path.sep);
    } catch {
      return false;
    }
  }).length;
const until = async (done: () => boolean) => {
  while (!done()) await new Promise((r) => setTimeout(r, 20));
};

describe("WAL checkpoints in a worker thread", () => {
  it("leaves checkpoints to the worker, which copies the WAL into the database file", async () => {
    const stateDir = makeTempDir("checkpoint-worker");
    const store = openStore(stateDir, { checkpointWorker: ENTRY });
    stores.push(store);
    expect(autocheckpoint(store)).toBe(0);
    const file = path.join(stateDir, STATE_FILE_NAME);
    const sizeBefore = fs.statSync(file).size;
    // 8 MiB through the journal's connection (review chunks, each its own commit): past SQLite's own threshold
    // (1,000 pages) eight times over, none of which the committing connection checkpoints.
    await store.changes.stageAhead([{ path: "/project/a", after: { content: randomBytes(8 * MiB) } }]);
    // Only the worker can have moved the pages into the database file.
    await until(() => fs.statSync(file).size >= sizeBefore + 8 * MiB);
    expect(autocheckpoint(store)).toBe(0);
  });

  it("brings a WAL past its bound back within it while writes go on and a reader never pauses", async () => {
    // Before the bound, the worker's PASSIVE rounds copied the WAL but never left it with nothing to copy (the one
    // moment a writer starts it over), and the reader always held a snapshot: the file grew with every write (issue
    // 34: 187 MiB after 50 s of the read-write soak). Now the worker restarts it past the bound, and the next commit
    // cuts the file back to the bound.
    const stateDir = makeTempDir("checkpoint-bound");
    const store = openStore(stateDir, { checkpointWorker: ENTRY });
    stores.push(store);
    const file = path.join(stateDir, STATE_FILE_NAME);
    store.db.exec("CREATE TABLE load (x BLOB)");
    const insert = store.db.prepare("INSERT INTO load (x) VALUES (?)");
    const reader = await startSteadyReader(file);
    const row = 32 * 1024;
    let passed = false;
    let back = false;
    let rows = 0;
    try {
      // Bounded by bytes, not time: three bounds written without the WAL coming back is a failure.
      while (!back && rows * row < 3 * WAL_SIZE_LIMIT_BYTES) {
        store.transaction(() => {
          for (let i = 0; i < 32; i += 1) insert.run(randomBytes(row));
        });
        rows += 32;
        const size = fs.statSync(`${file}-wal`).size;
        if (size > WAL_SIZE_LIMIT_BYTES) passed = true;
        else if (passed) back = true;
        // Paced, so the worker's rounds (every 250 ms) come round while the writes go on.
        await new Promise((r) => setTimeout(r, 10));
      }
    } finally {
      const reads = await reader.stop();
      expect(reads).toBeGreaterThan(0);
    }
    expect(passed).toBe(true);
    expect(back).toBe(true);
    expect(store.db.prepare("SELECT count(*) AS n FROM load").get()).toEqual({ n: rows });
  });

  it("falls back to SQLite's own checkpoints when the worker fails", async () => {
    const failing = { file: new URL("data:text/javascript,throw new Error('the checkpoint worker failed')") };
    const reasons: string[] = [];
    const store = openStore(makeTempDir("checkpoint-fallback"), {
      checkpointWorker: failing,
      onCheckpointFallBack: (reason) => reasons.push(reason),
    });
    stores.push(store);
    await until(() => autocheckpoint(store) === 1000);
    // Said once, with the worker's own error: the operator's log shows why checkpoints moved back.
    expect(reasons).toEqual(["the checkpoint worker failed"]);
  });

  it("says nothing when the bridge closes the worker itself", async () => {
    const reasons: string[] = [];
    const store = openStore(makeTempDir("checkpoint-close"), {
      checkpointWorker: ENTRY,
      onCheckpointFallBack: (reason) => reasons.push(reason),
    });
    store.close();
    await store.closed();
    expect(reasons).toEqual([]);
  });

  it("has let go of the state file once closed, whether the worker was running or still starting", async () => {
    // Before closed() waited for the worker, a bridge closed early had its worker open the state file (creating its
    // -wal and -shm) while the tests removed the directory: ENOTEMPTY. Counted by this process's open files.
    const running = makeTempDir("checkpoint-close-running");
    const store = openStore(running, { checkpointWorker: ENTRY });
    await until(() => openFilesUnder(running) > 3 * 3);
    store.close();
    await store.closed();
    expect(openFilesUnder(running)).toBe(0);

    const starting = makeTempDir("checkpoint-close-starting");
    const early = openStore(starting, { checkpointWorker: ENTRY });
    early.close();
    await early.closed();
    for (let look = 0; look < 10; look += 1) {
      expect(openFilesUnder(starting)).toBe(0);
      await new Promise((r) => setTimeout(r, 30));
    }
  });

  it("starts the worker once startAfter settles, the connections keeping SQLite's own checkpoints until then", async () => {
    // The bridge starts it after its planes listen, so the thread's start is not in the first answer's path.
    let listened = () => {};
    const startAfter = new Promise<void>((resolve) => (listened = resolve));
    const stateDir = makeTempDir("checkpoint-deferred");
    const store = openStore(stateDir, { checkpointWorker: { ...ENTRY, startAfter } });
    stores.push(store);
    await new Promise((r) => setTimeout(r, 100));
    expect(autocheckpoint(store)).toBe(1000);
    // The worker's own connection opens the state file (its database, -wal and -shm) once it runs.
    const connectionsOnly = openFilesUnder(stateDir);
    listened();
    await until(() => autocheckpoint(store) === 0);
    await until(() => openFilesUnder(stateDir) > connectionsOnly);
  });

  it("never starts a deferred worker once the store is closed", async () => {
    let listened = () => {};
    const startAfter = new Promise<void>((resolve) => (listened = resolve));
    const stateDir = makeTempDir("checkpoint-deferred-closed");
    const reasons: string[] = [];
    const store = openStore(stateDir, {
      checkpointWorker: { ...ENTRY, startAfter },
      onCheckpointFallBack: (reason) => reasons.push(reason),
    });
    store.close();
    await store.closed();
    listened();
    for (let look = 0; look < 10; look += 1) {
      expect(openFilesUnder(stateDir)).toBe(0);
      await new Promise((r) => setTimeout(r, 30));
    }
    expect(reasons).toEqual([]);
  });

  it("keeps SQLite's own checkpoints without a worker", () => {
    const store = openStore(makeTempDir("checkpoint-default"));
    stores.push(store);
    expect(autocheckpoint(store)).toBe(1000);
  });
});
