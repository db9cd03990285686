// The store: one SQLite database and the typed query groups over it. All SQL lives in this folder.
import { openDatabase, type Db } from "./database.js";
import { createActivityQueries } from "./activity.js";
import { createJournalQueries } from "./journal.js";
import { createProjectQueries } from "./projects.js";
import { createSessionQueries } from "./sessions.js";
import { createSettingQueries } from "./settings.js";
import { createStagingQueries } from "./staging.js";

export function createStore(db: Db) {
  return {
    db,
    projects: createProjectQueries(db),
    sessions: createSessionQueries(db),
    settings: createSettingQueries(db),
    activity: createActivityQueries(db),
    journal: createJournalQueries(db),
    staging: createStagingQueries(db),
    /** Runs fn inside one SQLite transaction. */
    transaction: <T>(fn: () => T): T => db.transaction(fn)(),
    close: (): void => {
      db.close();
    },
  };
}

export type Store = ReturnType<typeof createStore>;

export function openStore(stateDir: string): Store {
  return createStore(openDatabase(stateDir));
}
