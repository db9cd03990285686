// A session's change set: every file its intents created, changed, moved or deleted, each change attributed
// to the intent (call id, tool, time) that made it, and per file the net change from before the session's
// first change to after its last. Built from the review record (store/changes.ts); paths shown as /project/...
import type { ChangeQueries, FileChangeRow, FileVersion } from "../store/changes.js";
import { toDisplayPath } from "../sandbox/paths.js";
import { factsOf, type SideFacts } from "./diff.js";

/** Most change rows one change set reads; a session past it is shown up to there, and says so. */
export const MAX_CHANGE_SET_ROWS = 10_000;

export type ChangeKind = "created" | "modified" | "deleted" | "moved_from" | "moved_to" | "unchanged";

export interface ChangeEntry {
  path: string;
  change: ChangeKind;
  /** A move's other path (moved_from: where it went; moved_to: where it came from). */
  moved?: string;
  before?: SideFacts;
  after?: SideFacts;
  /** The contents were dropped past the review budget: no diff, and no revert, for this change. */
  detailDropped?: true;
}

export interface IntentEntry {
  callId: string;
  tool: string;
  /** When the intent recorded its change (ISO 8601). */
  changedAt: string;
  files: ChangeEntry[];
}

export interface FileEntry extends ChangeEntry {
  /** Call ids of the intents that changed this file, oldest first. */
  intents: string[];
}

/** What an intent's changes could not record (a terminal command past the checkpoint budget), said here. */
export interface NoticeEntry {
  callId: string;
  tool: string;
  changedAt: string;
  notice: string;
}

export interface ChangeSet {
  intents: IntentEntry[];
  files: FileEntry[];
  notices?: NoticeEntry[];
  /** True when the session has more changes than one change set reads (MAX_CHANGE_SET_ROWS). */
  truncated?: true;
}

/** What one recorded change did to its path. */
export function kindOf(before: FileVersion | undefined, after: FileVersion | undefined, moved: boolean): ChangeKind {
  if (!before && after) return moved ? "moved_to" : "created";
  if (before && !after) return moved ? "moved_from" : "deleted";
  if (before && after && before.hash === after.hash && before.mode === after.mode) return "unchanged";
  return before ? "modified" : "unchanged";
}

function entryOf(root: string, path: string, rows: FileChangeRow[]): ChangeEntry {
  const first = rows[0]!;
  const last = rows[rows.length - 1]!;
  const moved = last.moved !== null && (first.before === undefined) !== (last.after === undefined);
  const before = factsOf(first.before);
  const after = factsOf(last.after);
  return {
    path: toDisplayPath(root, path),
    change: kindOf(first.before, last.after, moved),
    ...(moved && last.moved ? { moved: toDisplayPath(root, last.moved) } : {}),
    ...(before ? { before } : {}),
    ...(after ? { after } : {}),
    ...(rows.some((r) => r.detailDropped) ? { detailDropped: true as const } : {}),
  };
}

/** The session's applied changes, oldest first (at most MAX_CHANGE_SET_ROWS, then `truncated`). */
export function sessionRows(queries: ChangeQueries, sessionId: string): { rows: FileChangeRow[]; truncated: boolean } {
  const rows = queries.ofSession(sessionId, 0, MAX_CHANGE_SET_ROWS + 1);
  return { rows: rows.slice(0, MAX_CHANGE_SET_ROWS), truncated: rows.length > MAX_CHANGE_SET_ROWS };
}

/** Rows grouped by path, in the order each path was first changed. */
export function byPath(rows: FileChangeRow[]): Map<string, FileChangeRow[]> {
  const groups = new Map<string, FileChangeRow[]>();
  for (const r of rows) {
    const group = groups.get(r.path);
    if (group) group.push(r);
    else groups.set(r.path, [r]);
  }
  return groups;
}

export function buildChangeSet(rows: FileChangeRow[], truncated = false): ChangeSet {
  const intents: IntentEntry[] = [];
  let current: IntentEntry | undefined;
  for (const r of rows) {
    if (!current || current.callId !== r.callId) {
      current = { callId: r.callId, tool: r.tool, changedAt: new Date(r.createdAt).toISOString(), files: [] };
      intents.push(current);
    }
    current.files.push(entryOf(r.projectRoot, r.path, [r]));
  }
  const files: FileEntry[] = [];
  for (const [path, group] of byPath(rows)) {
    files.push({
      ...entryOf(group[0]!.projectRoot, path, group),
      intents: [...new Set(group.map((r) => r.callId))],
    });
  }
  return { intents, files, ...(truncated ? { truncated: true as const } : {}) };
}

/** The change set of a session (every project it changed files in), with what it could not record. */
export function readChangeSet(queries: ChangeQueries, sessionId: string): ChangeSet {
  const { rows, truncated } = sessionRows(queries, sessionId);
  const notices = queries.noticesOf(sessionId).map((n) => ({
    callId: n.callId,
    tool: n.tool,
    changedAt: new Date(n.createdAt).toISOString(),
    notice: n.notice,
  }));
  return { ...buildChangeSet(rows, truncated), ...(notices.length > 0 ? { notices } : {}) };
}
