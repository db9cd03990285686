// The journal connection's group commit (server/store/wal-sync.ts) on a real state file: commits made before an
// fsync started share it, a commit made while one runs waits for the next, and a FULL connection needs none.
import { afterEach, describe, expect, it } from "vitest";
import { openDatabase, openJournalConnection, type Db } from "../../../server/store/database.js";
import { createWalSync } from "../../../server/store/wal-sync.js";
import { makeTempDir } from "../../helpers/bridge.js";

const CONCURRENT_CALLERS = 50;

describe("WAL group commit", () => {
  const open: Db[] = [];
  afterEach(() => {
    for (const db of open.splice(0).reverse()) db.close();
  });
  function journalConnection(): { main: Db; journal: Db } {
    const dir = makeTempDir("wal-sync");
    const main = openDatabase(dir);
    const journal = openJournalConnection(dir);
    open.push(main, journal);
    journal.exec("CREATE TABLE IF NOT EXISTS t (x INTEGER)");
    return { main, journal };
  }

  it("commits on the journal connection without an fsync of its own (synchronous=NORMAL)", () => {
    const { main, journal } = journalConnection();
    expect(journal.pragma("synchronous", { simple: true })).toBe(1);
    expect(main.pragma("synchronous", { simple: true })).toBe(2);
  });

  it("covers every commit made before it with one fsync, shared by concurrent callers", async () => {
    const { journal } = journalConnection();
    const sync = createWalSync(journal);
    try {
      const insert = journal.prepare("INSERT INTO t (x) VALUES (?)");
      const waits: Array<Promise<void>> = [];
      for (let i = 0; i < CONCURRENT_CALLERS; i++) {
        insert.run(i);
        waits.push(sync.durable());
      }
      await Promise.all(waits);
      // The first caller starts an fsync; all the others arrive while it runs and share the next one.
      expect(sync.syncs).toBe(2);
      expect(journal.prepare("SELECT count(*) AS n FROM t").get()).toEqual({ n: CONCURRENT_CALLERS });
    } finally {
      sync.close();
    }
  });

  it("makes a commit that lands while an fsync runs wait for a later fsync", async () => {
    const { journal } = journalConnection();
    const sync = createWalSync(journal);
    try {
      const first = sync.durable();
      journal.prepare("INSERT INTO t (x) VALUES (1)").run();
      const second = sync.durable();
      expect(second).not.toBe(first);
      let firstDone = false;
      void first.then(() => (firstDone = true));
      await second;
      expect(firstDone).toBe(true);
      expect(sync.syncs).toBe(2);
      // Once both settled, the next caller starts an fsync of its own at once.
      await sync.durable();
      expect(sync.syncs).toBe(3);
    } finally {
      sync.close();
    }
  });

  it("has nothing to do on a connection that commits with synchronous=FULL", async () => {
    const { main } = journalConnection();
    const sync = createWalSync(main);
    await sync.durable();
    expect(sync.syncs).toBe(0);
    sync.close();
  });

  it("closes while an fsync runs without failing it, and answers later callers at once", async () => {
    const { journal } = journalConnection();
    const sync = createWalSync(journal);
    const running = sync.durable();
    sync.close();
    await running;
    await sync.durable();
    expect(sync.syncs).toBe(1);
  });
});
