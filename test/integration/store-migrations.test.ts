import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { openDatabase } from "../../server/store/database.js";
import { migrations } from "../../server/store/migrations/index.js";
import { makeTempDir } from "../helpers/bridge.js";

describe("store migrations", () => {
  it("apply each numbered migration once, in order, and record it", () => {
    const dir = makeTempDir("migrate");
    openDatabase(dir).close();
    const again = openDatabase(dir);
    const rows = again.prepare("SELECT version, name FROM schema_migrations ORDER BY version").all() as Array<{
      version: number;
      name: string;
    }>;
    again.close();
    const expected = [...migrations]
      .sort((a, b) => a.version - b.version)
      .map((m) => ({ version: m.version, name: m.name }));
    expect(rows).toEqual(expected);
    expect(new Set(migrations.map((m) => m.version)).size).toBe(migrations.length);
  });

  it("upgrades a database created by an older schema without touching its rows", () => {
    const dir = makeTempDir("upgrade");
    const file = path.join(dir, "urlbridge.sqlite");
    const first = migrations.find((m) => m.version === 1)!;
    const old = new Database(file);
    old.exec(
      "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)",
    );
    old.exec(first.sql);
    old.prepare("INSERT INTO schema_migrations VALUES (1, ?, 0)").run(first.name);
    old.prepare("INSERT INTO settings (key, value) VALUES ('public_origin', 'https://kept.example')").run();
    old.close();
    fs.chmodSync(file, 0o600);
    const db = openDatabase(dir);
    expect(db.prepare("SELECT value FROM settings WHERE key = 'public_origin'").get()).toEqual({
      value: "https://kept.example",
    });
    expect((db.prepare("SELECT COUNT(*) AS n FROM schema_migrations").get() as { n: number }).n).toBe(
      migrations.length,
    );
    db.close();
  });

  it("adds the web permission, off, to every project a database from before 004 holds", () => {
    const dir = makeTempDir("upgrade-web");
    const file = path.join(dir, "urlbridge.sqlite");
    const old = new Database(file);
    old.exec(
      "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)",
    );
    for (const m of migrations.filter((m) => m.version === 1)) {
      old.exec(m.sql);
      old.prepare("INSERT INTO schema_migrations VALUES (?, ?, 0)").run(m.version, m.name);
    }
    old
      .prepare(
        "INSERT INTO projects (id, name, root, perm_write, perm_terminal, created_at, updated_at) VALUES ('p1', 'old', '/tmp', 1, 1, 0, 0)",
      )
      .run();
    old.close();
    fs.chmodSync(file, 0o600);
    const db = openDatabase(dir);
    expect(db.prepare("SELECT perm_write, perm_terminal, perm_web FROM projects WHERE id = 'p1'").get()).toEqual({
      perm_write: 1,
      perm_terminal: 1,
      perm_web: 0,
    });
    db.close();
  });
});
