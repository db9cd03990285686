import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { ACTIVITY_MAX_PENDING, type NewActivity } from "../../../server/store/activity.js";
import { openDatabase, openLogConnection, STATE_FILE_NAME } from "../../../server/store/database.js";
import { createStore, openStore, type Store } from "../../../server/store/index.js";

const row = (i: number): NewActivity => ({
  sessionId: "s1",
  generation: 1,
  at: 1_700_000_000_000 + i,
  route: "r",
  tool: "read",
  ok: true,
  errorCode: null,
  httpStatus: 200,
  durationMs: 1,
  callId: null,
  dedupe: null,
  params: { path: "a.txt" },
});

const opened: Array<{ store: Store; dir: string; other?: Database.Database }> = [];

function setup() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "urlbridge-activity-"));
  const store = openStore(dir);
  const entry: { store: Store; dir: string; other?: Database.Database } = { store, dir };
  opened.push(entry);
  return entry;
}

afterEach(() => {
  for (const { store, dir, other } of opened.splice(0)) {
    if (other?.open) other.close();
    store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

describe("activity log under a failing store", () => {
  it("keeps rows while another connection holds the write lock, then writes them once it is released", () => {
    const entry = setup();
    const other = new Database(path.join(entry.dir, STATE_FILE_NAME));
    entry.other = other;
    other.exec("BEGIN IMMEDIATE");
    for (let i = 0; i < 5; i++) entry.store.activity.insert(row(i));
    expect(() => entry.store.activity.flush()).not.toThrow();
    const during = entry.store.activity.health();
    expect(during.failing).toBe(true);
    expect(during.pending).toBe(5);
    expect(during.lastError?.code).toBe("SQLITE_BUSY");

    other.exec("ROLLBACK");
    entry.store.activity.flush();
    expect(entry.store.activity.health()).toMatchObject({ failing: false, pending: 0, dropped: 0 });
    expect(entry.store.activity.list({ limit: 10 })).toHaveLength(5);
  });

  it("bounds the buffer while writes keep failing and counts what it dropped", () => {
    const entry = setup();
    const other = new Database(path.join(entry.dir, STATE_FILE_NAME));
    entry.other = other;
    other.exec("BEGIN IMMEDIATE");
    const extra = 25;
    for (let i = 0; i < ACTIVITY_MAX_PENDING + extra; i++) entry.store.activity.insert(row(i));
    entry.store.activity.flush();
    expect(entry.store.activity.health()).toMatchObject({
      pending: ACTIVITY_MAX_PENDING,
      dropped: extra,
      failing: true,
    });
    other.exec("ROLLBACK");
    entry.store.activity.flush();
    const listed = entry.store.activity.list({ limit: 1 });
    // The oldest rows were the ones dropped: the newest row written is the last one inserted.
    expect(listed[0]?.at).toBe(row(ACTIVITY_MAX_PENDING + extra - 1).at);
  });

  it("survives a full database (SQLITE_FULL) and recovers when space returns", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "urlbridge-activity-"));
    openDatabase(dir).close(); // creates the file and its schema
    const logDb = openLogConnection(dir);
    const store = createStore(openDatabase(dir), logDb);
    opened.push({ store, dir });
    // A page cap on the log connection makes SQLite answer SQLITE_FULL exactly as a full disk does.
    const pages = logDb.pragma("page_count", { simple: true }) as number;
    logDb.pragma(`max_page_count = ${pages}`);
    const wide = { ...row(0), params: { path: "p".repeat(4000) } };
    for (let i = 0; i < 50; i++) store.activity.insert({ ...wide, at: i });
    expect(() => store.activity.flush()).not.toThrow();
    expect(store.activity.health()).toMatchObject({ failing: true, pending: 50 });
    expect(store.activity.health().lastError?.code).toBe("SQLITE_FULL");

    logDb.pragma(`max_page_count = ${pages + 10_000}`);
    store.activity.flush();
    expect(store.activity.health()).toMatchObject({ failing: false, pending: 0 });
    expect(store.activity.list({ limit: 100 })).toHaveLength(50);
  });
});
