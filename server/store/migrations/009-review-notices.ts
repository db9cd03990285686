// Review and undo (issue 30): what a change set could not record, said in it rather than left out silently
// (a terminal command whose project was past the checkpoint budget: "terminal changes not recorded: ...").
import type { Migration } from "./index.js";

export const reviewNoticesSchema: Migration = {
  version: 9,
  name: "review-notices",
  sql: `
    CREATE TABLE review_notices (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
      intent_id INTEGER NOT NULL,
      call_id TEXT NOT NULL,
      tool TEXT NOT NULL,
      notice TEXT NOT NULL,
      created_at INTEGER NOT NULL
    );
    CREATE INDEX review_notices_session ON review_notices(session_id, id);
  `,
};
