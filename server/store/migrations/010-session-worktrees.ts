// Worktree sessions (issue 31): a session on a git project may work in its own linked worktree on its own branch.
// The row goes only after the worktree folder is removed (no cascade from sessions); `removing_at` marks a delete
// under way so a crash between its steps is finished at the next start (server/control/worktrees/).
import type { Migration } from "./index.js";

export const sessionWorktreesSchema: Migration = {
  version: 10,
  name: "session-worktrees",
  sql: `
    CREATE TABLE session_worktrees (
      session_id TEXT PRIMARY KEY REFERENCES sessions(id),
      project_id TEXT NOT NULL,
      path TEXT NOT NULL,
      branch TEXT NOT NULL,
      base_ref TEXT NOT NULL,
      base_commit TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      outcome TEXT NULL CHECK (outcome IN ('merged','kept','discarded')),
      outcome_at INTEGER NULL,
      outcome_commit TEXT NULL,
      removing_at INTEGER NULL
    );
    CREATE INDEX session_worktrees_project ON session_worktrees(project_id);
    CREATE UNIQUE INDEX session_worktrees_path ON session_worktrees(path);
  `,
};
