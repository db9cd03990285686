// The store: one SQLite database and the typed query groups over it. All SQL lives in this folder.
import { openDatabase, openLogConnection, type Db } from "./database.js";
import { createActivityQueries } from "./activity.js";
import { createJournalQueries } from "./journal.js";
import { createProjectQueries } from "./projects.js";
import { createSessionQueries } from "./sessions.js";
import { createSettingQueries } from "./settings.js";
import { createStagingQueries } from "./staging.js";
import { createScopeVersion } from "./scope-version.js";

/** `logDb` may be a second connection to the same file for the activity log (see openLogConnection). */
export function createStore(db: Db, logDb: Db = db) {
  const scope = createScopeVersion();
  const store = {
    db,
    /** Bumped on every project, session or capability write; see scope-version.ts. */
    scope,
    projects: createProjectQueries(db, scope),
    sessions: createSessionQueries(db, scope),
    settings: createSettingQueries(db),
    activity: createActivityQueries(logDb),
    journal: createJournalQueries(db),
    staging: createStagingQueries(db),
    /** Runs fn inside one SQLite transaction. */
    transaction: <T>(fn: () => T): T => db.transaction(fn)(),
    close: (): void => {
      store.activity.flush();
      if (logDb !== db) logDb.close();
      db.close();
    },
  };
  return store;
}

export type Store = ReturnType<typeof createStore>;

export function openStore(stateDir: string): Store {
  const db = openDatabase(stateDir);
  return createStore(db, openLogConnection(stateDir));
}
