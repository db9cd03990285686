// Typed queries over sessions and their per-generation capability tokens. Tokens never reach the database
// as such: rows hold a keyed digest (looked up) and the sealed token (opened for Init URLs); capability-key.ts.
import type { CapabilitySealer } from "./capability-key.js";
import type { Db } from "./database.js";
import { createScopeVersion, type ScopeVersion } from "./scope-version.js";
import { toWorktreeRow, type SessionWorktreeRow } from "./worktrees.js";

export type CapabilityKind = "init" | "read" | "mutation";

export interface SessionRow {
  id: string;
  projectId: string;
  name: string;
  enabled: boolean;
  generation: number;
  createdAt: number;
  updatedAt: number;
}

interface RawSession {
  id: string;
  project_id: string;
  name: string;
  enabled: number;
  generation: number;
  created_at: number;
  updated_at: number;
}

/** What the gateway learns from one token: the live session generation it belongs to and its project. */
export interface CapabilityLookup {
  token: string;
  kind: CapabilityKind;
  sessionId: string;
  generation: number;
  sessionName: string;
  projectId: string;
  projectName: string;
  /** The project's root, or the session's own worktree folder when it has one (issue 31). */
  root: string;
  permissions: { write: boolean; terminal: boolean; web: boolean };
  /** The session's worktree, when it works in one (store/worktrees.ts). */
  worktree?: SessionWorktreeRow;
}

function toSession(r: RawSession): SessionRow {
  return {
    id: r.id,
    projectId: r.project_id,
    name: r.name,
    enabled: r.enabled === 1,
    generation: r.generation,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export function createSessionQueries(db: Db, sealer: CapabilitySealer, scope: ScopeVersion = createScopeVersion()) {
  const listStmt = db.prepare("SELECT * FROM sessions ORDER BY created_at, id");
  const byProjectStmt = db.prepare("SELECT * FROM sessions WHERE project_id = ? ORDER BY created_at, id");
  const getStmt = db.prepare("SELECT * FROM sessions WHERE id = ?");
  const insertStmt = db.prepare(
    "INSERT INTO sessions (id, project_id, name, enabled, generation, created_at, updated_at) VALUES (@id, @projectId, @name, @enabled, @generation, @now, @now)",
  );
  const updateStmt = db.prepare(
    "UPDATE sessions SET name = @name, enabled = @enabled, generation = @generation, updated_at = @now WHERE id = @id",
  );
  const deleteStmt = db.prepare("DELETE FROM sessions WHERE id = ?");
  const countStmt = db.prepare("SELECT COUNT(*) AS n FROM sessions");
  const countEnabledStmt = db.prepare("SELECT COUNT(*) AS n FROM sessions WHERE enabled = 1");
  const insertCapStmt = db.prepare(
    "INSERT INTO capabilities (digest, session_id, generation, kind, sealed, created_at) VALUES (?, ?, ?, ?, ?, ?)",
  );
  const deleteCapsStmt = db.prepare("DELETE FROM capabilities WHERE session_id = ?");
  const deleteAllCapsStmt = db.prepare("DELETE FROM capabilities");
  const countCapsStmt = db.prepare("SELECT COUNT(*) AS n FROM capabilities");
  const capsForStmt = db.prepare("SELECT kind, sealed FROM capabilities WHERE session_id = ? AND generation = ?");
  const tokenExistsStmt = db.prepare("SELECT 1 FROM capabilities WHERE digest = ?");
  // A token resolves only while its session is enabled and still on the token's generation.
  const lookupStmt = db.prepare(`
    SELECT c.kind, s.id AS session_id, s.generation, s.name AS session_name,
           p.id AS project_id, p.name AS project_name, p.root, p.perm_write, p.perm_terminal, p.perm_web,
           w.path AS w_path, w.branch AS w_branch, w.base_ref AS w_base_ref, w.base_commit AS w_base_commit,
           w.created_at AS w_created_at, w.outcome AS w_outcome, w.outcome_at AS w_outcome_at,
           w.outcome_commit AS w_outcome_commit, w.removing_at AS w_removing_at
    FROM capabilities c
    JOIN sessions s ON s.id = c.session_id AND s.generation = c.generation AND s.enabled = 1
    JOIN projects p ON p.id = s.project_id
    LEFT JOIN session_worktrees w ON w.session_id = s.id
    WHERE c.digest = ?`);

  return {
    list: (): SessionRow[] => (listStmt.all() as RawSession[]).map(toSession),
    listByProject: (projectId: string): SessionRow[] => (byProjectStmt.all(projectId) as RawSession[]).map(toSession),
    get: (id: string): SessionRow | undefined => {
      const r = getStmt.get(id) as RawSession | undefined;
      return r && toSession(r);
    },
    insert: (s: { id: string; projectId: string; name: string; enabled: boolean; generation: number }): void => {
      scope.value += 1;
      insertStmt.run({ ...s, enabled: s.enabled ? 1 : 0, now: Date.now() });
    },
    update: (s: { id: string; name: string; enabled: boolean; generation: number }): void => {
      scope.value += 1;
      updateStmt.run({ ...s, enabled: s.enabled ? 1 : 0, now: Date.now() });
    },
    delete: (id: string): boolean => {
      scope.value += 1;
      return deleteStmt.run(id).changes > 0;
    },
    count: (): number => (countStmt.get() as { n: number }).n,
    countEnabled: (): number => (countEnabledStmt.get() as { n: number }).n,
    tokenExists: (token: string): boolean => tokenExistsStmt.get(sealer.digest(token)) !== undefined,
    countCapabilities: (): number => (countCapsStmt.get() as { n: number }).n,
    replaceCapabilities: (sessionId: string, generation: number, tokens: Record<CapabilityKind, string>): void => {
      scope.value += 1;
      deleteCapsStmt.run(sessionId);
      const now = Date.now();
      for (const kind of ["init", "read", "mutation"] as const) {
        insertCapStmt.run(sealer.digest(tokens[kind]), sessionId, generation, kind, sealer.seal(tokens[kind]), now);
      }
    },
    deleteAllCapabilities: (): void => {
      scope.value += 1;
      deleteAllCapsStmt.run();
    },
    capabilitiesFor: (sessionId: string, generation: number): Partial<Record<CapabilityKind, string>> => {
      const out: Partial<Record<CapabilityKind, string>> = {};
      for (const r of capsForStmt.all(sessionId, generation) as Array<{ kind: CapabilityKind; sealed: Buffer }>) {
        // A value sealed under another key (a restored database) opens to nothing: that kind is absent.
        const token = sealer.open(r.sealed);
        if (token !== undefined) out[r.kind] = token;
      }
      return out;
    },
    lookup: (token: string): CapabilityLookup | undefined => {
      const r = lookupStmt.get(sealer.digest(token)) as
        | {
            kind: CapabilityKind;
            session_id: string;
            generation: number;
            session_name: string;
            project_id: string;
            project_name: string;
            root: string;
            perm_write: number;
            perm_terminal: number;
            perm_web: number;
            w_path: string | null;
            w_branch: string;
            w_base_ref: string;
            w_base_commit: string;
            w_created_at: number;
            w_outcome: SessionWorktreeRow["outcome"];
            w_outcome_at: number | null;
            w_outcome_commit: string | null;
            w_removing_at: number | null;
          }
        | undefined;
      if (!r) return undefined;
      const worktree =
        r.w_path === null
          ? undefined
          : toWorktreeRow({
              session_id: r.session_id,
              project_id: r.project_id,
              path: r.w_path,
              branch: r.w_branch,
              base_ref: r.w_base_ref,
              base_commit: r.w_base_commit,
              created_at: r.w_created_at,
              outcome: r.w_outcome,
              outcome_at: r.w_outcome_at,
              outcome_commit: r.w_outcome_commit,
              removing_at: r.w_removing_at,
            });
      return {
        token,
        kind: r.kind,
        sessionId: r.session_id,
        generation: r.generation,
        sessionName: r.session_name,
        projectId: r.project_id,
        projectName: r.project_name,
        root: worktree?.path ?? r.root,
        permissions: { write: r.perm_write === 1, terminal: r.perm_terminal === 1, web: r.perm_web === 1 },
        ...(worktree ? { worktree } : {}),
      };
    },
  };
}

export type SessionQueries = ReturnType<typeof createSessionQueries>;
