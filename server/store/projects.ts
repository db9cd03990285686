// Typed queries over the projects table.
import type { Db } from "./database.js";
import { createScopeVersion, type ScopeVersion } from "./scope-version.js";

/** A project's permissions: reading is always on; write, terminal and web (webfetch, websearch) are the operator's. */
export interface ProjectPermissions {
  write: boolean;
  terminal: boolean;
  web: boolean;
}

export interface ProjectRow {
  id: string;
  name: string;
  root: string;
  permissions: ProjectPermissions;
  createdAt: number;
  updatedAt: number;
}

interface RawProject {
  id: string;
  name: string;
  root: string;
  perm_write: number;
  perm_terminal: number;
  perm_web: number;
  created_at: number;
  updated_at: number;
}

function toProject(r: RawProject): ProjectRow {
  return {
    id: r.id,
    name: r.name,
    root: r.root,
    permissions: { write: r.perm_write === 1, terminal: r.perm_terminal === 1, web: r.perm_web === 1 },
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export function createProjectQueries(db: Db, scope: ScopeVersion = createScopeVersion()) {
  const listStmt = db.prepare("SELECT * FROM projects ORDER BY created_at, id");
  const getStmt = db.prepare("SELECT * FROM projects WHERE id = ?");
  const byNameStmt = db.prepare("SELECT * FROM projects WHERE name = ?");
  const insertStmt = db.prepare(
    "INSERT INTO projects (id, name, root, perm_write, perm_terminal, perm_web, created_at, updated_at) VALUES (@id, @name, @root, @w, @x, @web, @now, @now)",
  );
  const updateStmt = db.prepare(
    "UPDATE projects SET name = @name, root = @root, perm_write = @w, perm_terminal = @x, perm_web = @web, updated_at = @now WHERE id = @id",
  );
  const deleteStmt = db.prepare("DELETE FROM projects WHERE id = ?");

  return {
    list: (): ProjectRow[] => (listStmt.all() as RawProject[]).map(toProject),
    get: (id: string): ProjectRow | undefined => {
      const r = getStmt.get(id) as RawProject | undefined;
      return r && toProject(r);
    },
    getByName: (name: string): ProjectRow | undefined => {
      const r = byNameStmt.get(name) as RawProject | undefined;
      return r && toProject(r);
    },
    /** `web` left out is off, as for a project created before the permission existed. */
    insert: (p: { id: string; name: string; root: string; write: boolean; terminal: boolean; web?: boolean }): void => {
      scope.value += 1;
      insertStmt.run(projectColumns(p));
    },
    update: (p: { id: string; name: string; root: string; write: boolean; terminal: boolean; web: boolean }): void => {
      scope.value += 1;
      updateStmt.run(projectColumns(p));
    },
    delete: (id: string): boolean => {
      scope.value += 1;
      return deleteStmt.run(id).changes > 0;
    },
  };
}

export type ProjectQueries = ReturnType<typeof createProjectQueries>;

/** A project's columns as the insert and update statements bind them (`web` left out is off). */
function projectColumns(p: {
  id: string;
  name: string;
  root: string;
  write: boolean;
  terminal: boolean;
  web?: boolean;
}) {
  return {
    id: p.id,
    name: p.name,
    root: p.root,
    w: p.write ? 1 : 0,
    x: p.terminal ? 1 : 0,
    web: p.web ? 1 : 0,
    now: Date.now(),
  };
}
