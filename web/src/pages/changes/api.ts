// Changes page calls: a session's change set, pages of its exact diffs, the revert of a call, a file or all, and a
// worktree session's branch with the operator's merge, keep and discard.
import { api, query } from "../../api/client";
import type {
  ChangesOutput,
  MergeMode,
  RevertOutput,
  SessionView,
  WorktreeMergeView,
  WorktreeSessionView,
} from "../../api/types";

/** What a diff is of: one call's files, one file over the session, or every file the session changed. */
export type DiffScope = { intent: string } | { path: string } | { all: true };

/** What to revert, as the control API takes it; `force` overwrites later changes the check found. */
export type RevertScope = ({ intent: string } | { path: string } | { all: true }) & { force?: boolean };

const base = (sessionId: string) => `/api/sessions/${encodeURIComponent(sessionId)}`;

export const listSessions = () => api.get<SessionView[]>("/api/sessions");
export const fetchChangeSet = (sessionId: string) => api.get<ChangesOutput>(`${base(sessionId)}/changes`);

/** One page of a diff from byte `offset`; past the first page, `fingerprint` makes a changed diff refuse. */
export function fetchDiffPage(sessionId: string, scope: DiffScope, offset = 0, fingerprint?: string) {
  const what = "all" in scope ? { diff: "1" } : scope;
  return api.get<ChangesOutput>(
    `${base(sessionId)}/changes${query({ ...what, ...(offset > 0 ? { offset, fingerprint } : {}) })}`,
  );
}

export const revertChanges = (sessionId: string, scope: RevertScope) =>
  api.post<RevertOutput>(`${base(sessionId)}/revert`, scope);

/** A worktree session's branch against its base; `diff` adds the first page (or the page from `offset`) of its diff. */
export function fetchWorktree(sessionId: string, diff?: { offset: number; fingerprint?: string | undefined }) {
  const q = diff
    ? query({ diff: "1", ...(diff.offset > 0 ? { offset: diff.offset, fingerprint: diff.fingerprint } : {}) })
    : "";
  return api.get<WorktreeSessionView>(`${base(sessionId)}/worktree${q}`);
}

export const mergeWorktree = (sessionId: string, mode: MergeMode) =>
  api.post<WorktreeMergeView>(`${base(sessionId)}/worktree/merge`, { mode });
export const keepWorktree = (sessionId: string) => api.post<{ branch: string }>(`${base(sessionId)}/worktree/keep`);
export const discardWorktree = (sessionId: string) =>
  api.post<{ branch: string; path: string }>(`${base(sessionId)}/worktree/discard`);
