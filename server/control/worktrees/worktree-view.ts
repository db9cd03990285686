// A worktree session's worktree as the control API and UI show it (GET /api/sessions, docs/CONTROL_PLANE.md).
import fs from "node:fs";
import type { SessionWorktreeRow } from "../../store/worktrees.js";
import type { DiskUse } from "./disk-use.js";

export interface WorktreeView {
  path: string;
  branch: string;
  baseRef: string;
  baseCommit: string;
  createdAt: number;
  outcome: SessionWorktreeRow["outcome"];
  outcomeAt: number | null;
  outcomeCommit: string | null;
  /** The folder is gone (removed by hand): the session cannot work; prune, then delete the session. */
  stale: boolean;
  /** A delete is under way (or was interrupted and finishes at the next start). */
  removing: boolean;
  /** The last measurement of the folder's disk use; absent until the first one finished. */
  diskUse?: DiskUse;
}

export function worktreeViewOf(row: SessionWorktreeRow, diskUse: DiskUse | undefined): WorktreeView {
  return {
    path: row.path,
    branch: row.branch,
    baseRef: row.baseRef,
    baseCommit: row.baseCommit,
    createdAt: row.createdAt,
    outcome: row.outcome,
    outcomeAt: row.outcomeAt,
    outcomeCommit: row.outcomeCommit,
    stale: !fs.existsSync(row.path),
    removing: row.removingAt !== null,
    ...(diskUse ? { diskUse } : {}),
  };
}
