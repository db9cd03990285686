// Review and undo (issue 30): every file a session's intents changed, before and after, kept for review
// beyond the journal's crash-recovery preimages. Contents are content-addressed (a file written ten times
// stores each version once); a row whose contents were dropped past the retention or size budget keeps its
// path, hashes and sizes and says so (detail_dropped), so a change set is never silently wrong.
import type { Migration } from "./index.js";

export const fileChangesSchema: Migration = {
  version: 8,
  name: "file-changes",
  sql: `
    CREATE TABLE file_changes (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
      generation INTEGER NOT NULL,
      project_id TEXT NOT NULL,
      project_root TEXT NOT NULL,
      intent_id INTEGER NOT NULL,
      call_id TEXT NOT NULL,
      tool TEXT NOT NULL,
      seq INTEGER NOT NULL,
      path TEXT NOT NULL,
      path_key TEXT NOT NULL,
      moved TEXT,
      before_hash TEXT,
      before_mode INTEGER,
      before_size INTEGER,
      after_hash TEXT,
      after_mode INTEGER,
      after_size INTEGER,
      applied INTEGER NOT NULL DEFAULT 0,
      detail_dropped INTEGER NOT NULL DEFAULT 0,
      created_at INTEGER NOT NULL
    );
    CREATE INDEX file_changes_session ON file_changes(session_id, id);
    CREATE INDEX file_changes_intent ON file_changes(intent_id);
    CREATE INDEX file_changes_path ON file_changes(path_key, id);
    CREATE TABLE review_blobs (
      hash TEXT PRIMARY KEY,
      size INTEGER NOT NULL,
      content BLOB NOT NULL
    );
  `,
};
