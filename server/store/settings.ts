// A small key/value table for operator settings (saved public origin, ...).
import type { Db } from "./database.js";

export function createSettingQueries(db: Db) {
  const getStmt = db.prepare("SELECT value FROM settings WHERE key = ?");
  const setStmt = db.prepare(
    "INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
  );
  const delStmt = db.prepare("DELETE FROM settings WHERE key = ?");
  return {
    get: (key: string): string | undefined => (getStmt.get(key) as { value: string } | undefined)?.value,
    set: (key: string, value: string): void => {
      setStmt.run(key, value);
    },
    delete: (key: string): void => {
      delStmt.run(key);
    },
  };
}

export type SettingQueries = ReturnType<typeof createSettingQueries>;
