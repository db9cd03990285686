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
    const rows = again.prepare("SELECT version, name FROM schema_migrations ORDER BY version").all() as Array<{ version: number; name: string }>;
    again.close();
    const expected = [...migrations].sort((a, b) => a.version - b.version).map((m) => ({ version: m.version, name: m.name }));
    expect(rows).toEqual(expected);
    expect(new Set(migrations.map((m) => m.version)).size).toBe(migrations.length);
  });

  it("upgrades a database created by an older schema without touching its rows", () => {
    const dir = makeTempDir("upgrade");
    const file = path.join(dir, "urlbridge.sqlite");
    const first = migrations.find((m) => m.version === 1)!;
    const old = new Database(file);
    old.exec("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)");
    old.exec(first.sql);
    old.prepare("INSERT INTO schema_migrations VALUES (1, ?, 0)").run(first.name);
    old.prepare("INSERT INTO settings (key, value) VALUES ('public_origin', 'https://kept.example')").run();
    old.close();
    fs.chmodSync(file, 0o600);
    const db = openDatabase(dir);
    expect(db.prepare("SELECT value FROM settings WHERE key = 'public_origin'").get()).toEqual({ value: "https://kept.example" });
    expect((db.prepare("SELECT COUNT(*) AS n FROM schema_migrations").get() as { n: number }).n).toBe(migrations.length);
    db.close();
  });
});
