// What a revert would do, and whether it may: for each path in scope, the version to restore (the before of the
// session's first change in scope), the version the path must hold now (the after of its last change in scope),
// and a conflict wherever the disk holds something else or another session changed the path in between. Pure
// reads: the journaled revert (server/mutation/review/revert.ts) writes, and the operator's check calls this too.
import type { ChangeQueries, FileChangeRow, FileVersion } from "../store/changes.js";
import { contentHash } from "../store/changes.js";
import { readHeldFile } from "../sandbox/fd-ops.js";
import { walkInsideRoot } from "../sandbox/fd-walk.js";
import { toDisplayPath } from "../sandbox/paths.js";
import { byPath, sessionRows } from "./change-set.js";

/** What to revert: one intent (optionally one of its files), one file, or every file; from intent `since` on. */
export interface RevertScope {
  callId?: string;
  /** Canonical absolute path. */
  path?: string;
  since?: string;
  all?: boolean;
}

export interface RevertTarget {
  path: string;
  display: string;
  root: string;
  /** The version to put back; undefined: the path held no file, so the file there now is removed. */
  restore: FileVersion | undefined;
  /** What the path holds after the last change in scope; undefined: no file. */
  expected: FileVersion | undefined;
  /** The first and last change in scope, and every change to the path after the first, by anyone. */
  first: FileChangeRow;
  last: FileChangeRow;
  later: FileChangeRow[];
}

export interface LaterChange {
  callId: string;
  tool: string;
  changedAt: string;
  /** "this": a later change of the reverting session itself; "another": another session's. */
  session: "this" | "another";
}

export interface RevertConflict {
  path: string;
  /** Fingerprint the path should hold (null: no file), and what it holds (null: no file; "directory"). */
  expected: string | null;
  found: string | null;
  /** The recorded change that came after, when there is one (a change outside the bridge has none). */
  laterChange?: LaterChange;
}

/** The version on disk now, read by descriptor from the root, refusing any symlink on the way. */
export interface CurrentState {
  kind: "file" | "absent" | "directory";
  hash?: string;
  mode?: number;
}

/** The targets of `scope` for the session, or undefined when the scope names no applied change of it. */
export function revertTargets(
  queries: ChangeQueries,
  sessionId: string,
  scope: RevertScope,
): RevertTarget[] | undefined {
  let rows: FileChangeRow[];
  if (scope.callId !== undefined) {
    rows = queries.ofIntent(sessionId, scope.callId).filter((r) => r.applied);
    if (scope.path !== undefined) rows = rows.filter((r) => r.path === scope.path);
  } else {
    const since = scope.since === undefined ? 0 : queries.ofIntent(sessionId, scope.since).find((r) => r.applied)?.id;
    if (since === undefined) return undefined;
    rows = sessionRows(queries, sessionId).rows.filter((r) => r.id >= since);
    if (scope.path !== undefined) rows = rows.filter((r) => r.path === scope.path);
  }
  if (rows.length === 0) return undefined;
  const targets: RevertTarget[] = [];
  for (const [path, group] of byPath(rows)) {
    const first = group[0]!;
    const last = group[group.length - 1]!;
    const inScope = new Set(group.map((r) => r.id));
    targets.push({
      path,
      display: toDisplayPath(first.projectRoot, path),
      root: first.projectRoot,
      restore: first.before,
      expected: last.after,
      first,
      last,
      later: queries.laterOn(path, first.id).filter((r) => !inScope.has(r.id)),
    });
  }
  return targets;
}

export async function currentState(root: string, display: string): Promise<CurrentState> {
  const target = walkInsideRoot(root, display, { symlinks: "refuse", creating: true });
  try {
    if (!target.exists) return { kind: "absent" };
    const info = target.stats!;
    if (!info.isFile()) return { kind: "directory" };
    return { kind: "file", hash: contentHash(await readHeldFile(target.fd!, info.size)), mode: info.mode & 0o7777 };
  } finally {
    target.close();
  }
}

function holds(state: CurrentState, version: FileVersion | undefined): boolean {
  return version ? state.kind === "file" && state.hash === version.hash : state.kind === "absent";
}

const shortOf = (state: CurrentState): string | null =>
  state.kind === "file" ? state.hash!.slice(0, 32) : state.kind === "directory" ? "directory" : null;

/**
 * The conflicts of reverting `targets` now: a path that does not hold what its last change in scope left, or that a
 * change outside the scope came after (another session's, or this session's own later change when one intent is
 * reverted). Also returns each path's state now, which the revert plans from.
 */
export async function checkTargets(
  sessionId: string,
  targets: RevertTarget[],
): Promise<{ conflicts: RevertConflict[]; current: Map<string, CurrentState> }> {
  const conflicts: RevertConflict[] = [];
  const current = new Map<string, CurrentState>();
  for (const t of targets) {
    const now = await currentState(t.root, t.display);
    current.set(t.path, now);
    const later = t.later[t.later.length - 1];
    // A path already holding what a revert would put back is left alone: nothing of anyone's is overwritten.
    if (alreadyRestored(now, t)) continue;
    if (!holds(now, t.expected) || later) {
      conflicts.push({
        path: t.display,
        expected: t.expected ? t.expected.hash.slice(0, 32) : null,
        found: shortOf(now),
        ...(later
          ? {
              laterChange: {
                callId: later.callId,
                tool: later.tool,
                changedAt: new Date(later.createdAt).toISOString(),
                session: later.sessionId === sessionId ? ("this" as const) : ("another" as const),
              },
            }
          : {}),
      });
    }
  }
  return { conflicts, current };
}

/** True when the path already holds the version to restore (nothing to write). */
export function alreadyRestored(state: CurrentState, target: RevertTarget): boolean {
  if (!target.restore) return state.kind === "absent";
  return (
    state.kind === "file" && state.hash === target.restore.hash && state.mode === (target.restore.mode ?? state.mode)
  );
}
