// Projects, sessions, capabilities, settings and the activity log.
import type { Migration } from "./index.js";

export const coreSchema: Migration = {
  version: 1,
  name: "core",
  sql: `
    CREATE TABLE projects (
      id TEXT PRIMARY KEY,
      name TEXT NOT NULL UNIQUE,
      root TEXT NOT NULL,
      perm_write INTEGER NOT NULL,
      perm_terminal INTEGER NOT NULL,
      created_at INTEGER NOT NULL,
      updated_at INTEGER NOT NULL
    );
    CREATE TABLE sessions (
      id TEXT PRIMARY KEY,
      project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      name TEXT NOT NULL,
      enabled INTEGER NOT NULL,
      generation INTEGER NOT NULL,
      created_at INTEGER NOT NULL,
      updated_at INTEGER NOT NULL
    );
    CREATE INDEX sessions_project ON sessions(project_id);
    CREATE TABLE capabilities (
      token TEXT PRIMARY KEY,
      session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
      generation INTEGER NOT NULL,
      kind TEXT NOT NULL CHECK (kind IN ('init', 'read', 'mutation')),
      created_at INTEGER NOT NULL
    );
    CREATE UNIQUE INDEX capabilities_session_kind ON capabilities(session_id, generation, kind);
    CREATE TABLE settings (
      key TEXT PRIMARY KEY,
      value TEXT NOT NULL
    );
    CREATE TABLE activity (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      session_id TEXT NOT NULL,
      generation INTEGER NOT NULL,
      at INTEGER NOT NULL,
      route TEXT NOT NULL,
      tool TEXT,
      ok INTEGER NOT NULL,
      error_code TEXT,
      http_status INTEGER NOT NULL,
      duration_ms REAL NOT NULL,
      call_id TEXT,
      dedupe TEXT,
      params TEXT
    );
    CREATE INDEX activity_session ON activity(session_id, id);
  `,
};
