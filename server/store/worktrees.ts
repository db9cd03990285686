// Typed queries over session_worktrees (migration 010): which sessions work in their own git worktree, on which
// branch from which base, and what the operator decided about it (merged, kept, discarded).
import type { Db } from "./database.js";

export type WorktreeOutcome = "merged" | "kept" | "discarded";

export interface SessionWorktreeRow {
  sessionId: string;
  projectId: string;
  /** Absolute, canonical worktree folder: the session's project root. */
  path: string;
  /** The session's own branch, e.g. urlbridge/<session-name>. */
  branch: string;
  /** The branch it was made from, and the merge target (e.g. main). */
  baseRef: string;
  /** The base's commit when the worktree was made. */
  baseCommit: string;
  createdAt: number;
  outcome: WorktreeOutcome | null;
  outcomeAt: number | null;
  /** The merge or squash commit, or the fast-forwarded sha. */
  outcomeCommit: string | null;
  /** Set while a delete removes the folder and branch; a start finds it set after a crash and finishes. */
  removingAt: number | null;
}

interface RawWorktree {
  session_id: string;
  project_id: string;
  path: string;
  branch: string;
  base_ref: string;
  base_commit: string;
  created_at: number;
  outcome: WorktreeOutcome | null;
  outcome_at: number | null;
  outcome_commit: string | null;
  removing_at: number | null;
}

/** The row as the store's other queries read it from a `w.`-prefixed join (sessions.ts lookup). */
export function toWorktreeRow(r: RawWorktree): SessionWorktreeRow {
  return {
    sessionId: r.session_id,
    projectId: r.project_id,
    path: r.path,
    branch: r.branch,
    baseRef: r.base_ref,
    baseCommit: r.base_commit,
    createdAt: r.created_at,
    outcome: r.outcome,
    outcomeAt: r.outcome_at,
    outcomeCommit: r.outcome_commit,
    removingAt: r.removing_at,
  };
}

export type NewSessionWorktree = Pick<
  SessionWorktreeRow,
  "sessionId" | "projectId" | "path" | "branch" | "baseRef" | "baseCommit"
> & { createdAt?: number };

export function createWorktreeQueries(db: Db) {
  const getStmt = db.prepare("SELECT * FROM session_worktrees WHERE session_id = ?");
  const byProjectStmt = db.prepare(
    "SELECT * FROM session_worktrees WHERE project_id = ? ORDER BY created_at, session_id",
  );
  const listStmt = db.prepare("SELECT * FROM session_worktrees ORDER BY created_at, session_id");
  const countStmt = db.prepare("SELECT COUNT(*) AS n FROM session_worktrees WHERE project_id = ?");
  const insertStmt = db.prepare(`
    INSERT INTO session_worktrees (session_id, project_id, path, branch, base_ref, base_commit, created_at)
    VALUES (@sessionId, @projectId, @path, @branch, @baseRef, @baseCommit, @createdAt)`);
  const outcomeStmt = db.prepare(
    "UPDATE session_worktrees SET outcome = ?, outcome_at = ?, outcome_commit = ? WHERE session_id = ?",
  );
  const removingStmt = db.prepare(
    "UPDATE session_worktrees SET removing_at = COALESCE(removing_at, ?) WHERE session_id = ?",
  );
  const removeStmt = db.prepare("DELETE FROM session_worktrees WHERE session_id = ?");
  const toRow = (r: unknown) => (r === undefined ? undefined : toWorktreeRow(r as RawWorktree));
  return {
    get: (sessionId: string): SessionWorktreeRow | undefined => toRow(getStmt.get(sessionId)),
    byProject: (projectId: string): SessionWorktreeRow[] =>
      (byProjectStmt.all(projectId) as RawWorktree[]).map(toWorktreeRow),
    list: (): SessionWorktreeRow[] => (listStmt.all() as RawWorktree[]).map(toWorktreeRow),
    countByProject: (projectId: string): number => (countStmt.get(projectId) as { n: number }).n,
    insert: (row: NewSessionWorktree): void => {
      insertStmt.run({ ...row, createdAt: row.createdAt ?? Date.now() });
    },
    /** Records the operator's decision; `commit` is the merge/squash commit or the fast-forwarded sha. */
    setOutcome: (sessionId: string, outcome: WorktreeOutcome, commit: string | null): boolean =>
      outcomeStmt.run(outcome, Date.now(), commit, sessionId).changes > 0,
    /** Marks a delete under way (kept from the first mark, so a retried delete does not move it). */
    markRemoving: (sessionId: string): void => {
      removingStmt.run(Date.now(), sessionId);
    },
    remove: (sessionId: string): boolean => removeStmt.run(sessionId).changes > 0,
  };
}

export type WorktreeQueries = ReturnType<typeof createWorktreeQueries>;
