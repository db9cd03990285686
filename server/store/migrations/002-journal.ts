// The intent journal (with patch preimages and per-project state epochs) and staged content chunks.
// Both are scoped to one session generation, so a rotation starts clean; rows go with their session.
import type { Migration } from "./index.js";

export const journalSchema: Migration = {
  version: 2,
  name: "journal",
  sql: `
    CREATE TABLE intents (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
      generation INTEGER NOT NULL,
      project_id TEXT NOT NULL,
      project_root TEXT NOT NULL,
      call_id TEXT NOT NULL,
      tool TEXT NOT NULL,
      args_hash TEXT NOT NULL,
      state TEXT NOT NULL CHECK (state IN ('pending', 'running', 'succeeded', 'failed')),
      result TEXT,
      error_code TEXT,
      checkpoint TEXT,
      epoch_after INTEGER,
      created_at INTEGER NOT NULL,
      started_at INTEGER,
      finished_at INTEGER
    );
    CREATE UNIQUE INDEX intents_call ON intents(session_id, generation, call_id);
    CREATE INDEX intents_unfinished ON intents(state) WHERE state IN ('pending', 'running');
    CREATE TABLE intent_preimages (
      intent_id INTEGER NOT NULL REFERENCES intents(id) ON DELETE CASCADE,
      seq INTEGER NOT NULL,
      path TEXT NOT NULL,
      kind TEXT NOT NULL CHECK (kind IN ('file', 'absent', 'absent_dir')),
      mode INTEGER,
      content BLOB,
      PRIMARY KEY (intent_id, seq)
    );
    CREATE TABLE project_epochs (
      project_id TEXT PRIMARY KEY REFERENCES projects(id) ON DELETE CASCADE,
      epoch INTEGER NOT NULL
    );
    CREATE TABLE staged_blobs (
      session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
      generation INTEGER NOT NULL,
      blob TEXT NOT NULL,
      count INTEGER NOT NULL,
      bytes INTEGER NOT NULL,
      created_at INTEGER NOT NULL,
      last_used_at INTEGER NOT NULL,
      PRIMARY KEY (session_id, generation, blob)
    );
    CREATE TABLE staged_chunks (
      session_id TEXT NOT NULL,
      generation INTEGER NOT NULL,
      blob TEXT NOT NULL,
      idx INTEGER NOT NULL,
      content TEXT NOT NULL,
      bytes INTEGER NOT NULL,
      digest TEXT NOT NULL,
      PRIMARY KEY (session_id, generation, blob, idx),
      FOREIGN KEY (session_id, generation, blob) REFERENCES staged_blobs(session_id, generation, blob) ON DELETE CASCADE
    );
  `,
};
