// Diffs over a session's change set: one file's net change over the session (or since an intent), and every
// file one intent changed. Each file's diff is exact (diff.ts); the whole is one text, paged by page.ts.
import type { ChangeQueries, FileChangeRow } from "../store/changes.js";
import { toDisplayPath } from "../sandbox/paths.js";
import { byPath, kindOf, sessionRows, type ChangeKind } from "./change-set.js";
import { diffVersions, type ChangeDiff } from "./diff.js";

export interface FileDiffEntry {
  path: string;
  change: ChangeKind;
  /** A move's source, when this diff is of its destination. */
  from?: string;
  diff: ChangeDiff;
}

export interface DiffSet {
  files: FileDiffEntry[];
  /** Every text diff in file order, each file's after the previous one's. */
  text: string;
}

function assemble(files: FileDiffEntry[]): DiffSet {
  const parts = files.map((f) => {
    if (f.diff.kind === "text") return f.diff.diff;
    const what = f.diff.kind === "binary" ? "Binary file" : "Contents dropped past the review budget for";
    const side = (s: { size: number; fingerprint: string } | undefined) =>
      s ? `${s.size} bytes, fingerprint ${s.fingerprint}` : "absent";
    return `${what} ${f.path}: before ${side(f.diff.before)}; after ${side(f.diff.after)}\n`;
  });
  return { files, text: parts.join("") };
}

/**
 * One path's change over `rows` (oldest first, all of that path): from the first row's before to the last row's
 * after. A path that a row moved here from elsewhere is diffed from the source's before.
 */
function pathDiff(queries: ChangeQueries, root: string, path: string, rows: FileChangeRow[]): FileDiffEntry {
  const first = rows[0]!;
  const last = rows[rows.length - 1]!;
  const display = toDisplayPath(root, path);
  const movedHere = !first.before && last.after && first.moved !== null;
  const source = movedHere ? movedSource(queries, first) : undefined;
  const before = source ? source.before : first.before;
  const from = source ? toDisplayPath(root, source.path) : display;
  return {
    path: display,
    change: kindOf(first.before, last.after, movedHere || (!last.after && last.moved !== null)),
    ...(source ? { from } : {}),
    diff: diffVersions(display, before, last.after, queries.blob, from),
  };
}

/** The source row of a move, recorded by the same intent. */
function movedSource(queries: ChangeQueries, dest: FileChangeRow): FileChangeRow | undefined {
  return queries.ofIntent(dest.sessionId, dest.callId).find((r) => r.path === dest.moved && r.moved === dest.path);
}

/** Every file the intent changed (or only `path`, canonical), a move as one diff from source to destination. */
export function intentDiff(
  queries: ChangeQueries,
  sessionId: string,
  callId: string,
  path?: string,
): DiffSet | undefined {
  const rows = queries.ofIntent(sessionId, callId).filter((r) => r.applied);
  if (rows.length === 0) return undefined;
  const chosen = rows.filter((r) => path === undefined || r.path === path || r.moved === path);
  // A move's source shows inside its destination's diff.
  const shown = chosen.filter(
    (r) => !(r.moved !== null && r.before && !r.after && chosen.some((d) => d.path === r.moved)),
  );
  return assemble(shown.map((r) => pathDiff(queries, r.projectRoot, r.path, [r])));
}

/** The session's net change to `path` (canonical), over all its changes, or those from intent `since` on. */
export function fileDiff(queries: ChangeQueries, sessionId: string, path: string, since?: number): DiffSet | undefined {
  const rows = sessionRows(queries, sessionId).rows.filter((r) => r.path === path && r.id >= (since ?? 0));
  if (rows.length === 0) return undefined;
  return assemble([pathDiff(queries, rows[0]!.projectRoot, path, rows)]);
}

/** The session's net change to every file it changed (from intent `since` on). */
export function sessionDiff(queries: ChangeQueries, sessionId: string, since?: number): DiffSet {
  const rows = sessionRows(queries, sessionId).rows.filter((r) => r.id >= (since ?? 0));
  return assemble([...byPath(rows)].map(([path, group]) => pathDiff(queries, group[0]!.projectRoot, path, group)));
}

/** The first row id of an intent of the session: the point `since` names. */
export function firstRowOf(queries: ChangeQueries, sessionId: string, callId: string): number | undefined {
  return queries.ofIntent(sessionId, callId).find((r) => r.applied)?.id;
}
