// The store: one SQLite database and the typed query groups over it. All SQL lives in this folder.
import path from "node:path";
import { createCapabilitySealer, loadCapabilityKey, type CapabilitySealer } from "./capability-key.js";
import { openDatabase, openJournalConnection, openLogConnection, transactionRunner, type Db } from "./database.js";
import { CAPABILITY_KEY_ID_SETTING } from "./migrations/003-sealed-capabilities.js";
import { createActivityQueries } from "./activity.js";
import { createCapabilityText } from "./capability-text.js";
import { createChangeQueries } from "./changes.js";
import { createJournalHealth, type StoreHealth } from "./health.js";
import { createJournalQueries } from "./journal.js";
import { createLoginSessionQueries } from "./login-sessions.js";
import { createProjectQueries } from "./projects.js";
import { createSessionQueries } from "./sessions.js";
import { createSettingQueries } from "./settings.js";
import { createStagingQueries } from "./staging.js";
import { createScopeVersion } from "./scope-version.js";
import { createWalSync } from "./wal-sync.js";
import { createWorktreeQueries } from "./worktrees.js";
import { startWalCheckpointer, type CheckpointWorkerEntry } from "./wal-checkpointer.js";

/**
 * `logDb` may be a second connection to the same file for the activity log (see openLogConnection).
 * `sealer` defaults to the capability key beside the database file (<state>/capability-key).
 * `journalDb` may be a third connection for the intent journal (see openJournalConnection).
 */
export function createStore(
  db: Db,
  logDb: Db = db,
  sealer: CapabilitySealer = createCapabilitySealer(loadCapabilityKey(path.dirname(db.name)).key),
  journalDb: Db = db,
) {
  const scope = createScopeVersion();
  const settings = createSettingQueries(db);
  const sessions = createSessionQueries(db, sealer, scope);
  // Capabilities sealed under another key (the database restored or copied without its key file) cannot be
  // opened or matched: drop them, and say so, so the bridge mints fresh ones for every session.
  const storedKeyId = settings.get(CAPABILITY_KEY_ID_SETTING);
  const capabilityKeyReplaced =
    storedKeyId !== undefined && storedKeyId !== sealer.keyId && sessions.countCapabilities() > 0;
  if (capabilityKeyReplaced) sessions.deleteAllCapabilities();
  if (storedKeyId !== sealer.keyId) settings.set(CAPABILITY_KEY_ID_SETTING, sealer.keyId);
  // Stored text holds the session's tokens as placeholders (capability-text.ts): none in the file or a backup.
  const capabilityText = createCapabilityText(sessions.capabilitiesFor, () => scope.value);
  const journalHealth = createJournalHealth(journalDb);
  const journalSync = createWalSync(journalDb);
  const store = {
    db,
    /** Bumped on every project, session or capability write; see scope-version.ts. */
    scope,
    projects: createProjectQueries(db, scope),
    sessions,
    settings,
    /** The UI's login sessions (digests and expiries), kept across restarts. */
    loginSessions: createLoginSessionQueries(db),
    /** True when this open found capabilities sealed under another key and dropped them (bridge.ts rotates). */
    capabilityKeyReplaced,
    activity: createActivityQueries(logDb, capabilityText),
    journal: createJournalQueries(journalDb, capabilityText),
    /** What each intent changed, before and after, for review and revert (issue 30); on the journal's connection. */
    changes: createChangeQueries(journalDb, sealer),
    /** Makes the journal's commits so far durable (group commit, off the event loop); see wal-sync.ts. */
    journalSync,
    /** Refused and successful journal writes, reported by the mutation journal; see health.ts. */
    journalHealth,
    /**
     * What /api/health shows: `degraded` while the activity log or the journal cannot write (disk full, a lock
     * held by another process); both clear by themselves once writes work again.
     */
    health: (): StoreHealth => {
      const activityLog = store.activity.health();
      const journal = journalHealth.health();
      return { degraded: activityLog.failing || journal.failing, activityLog, journal };
    },
    staging: createStagingQueries(db, capabilityText),
    /** Sessions that work in their own git worktree (issue 31; migration 010). */
    worktrees: createWorktreeQueries(db),
    /** Runs fn inside one SQLite transaction. */
    transaction: transactionRunner(db),
    close: (): void => {
      journalHealth.stop();
      store.activity.flush();
      journalSync.close();
      if (logDb !== db) logDb.close();
      if (journalDb !== db) journalDb.close();
      db.close();
    },
    /** Resolves once nothing of this store has the state file open any more (openStore adds its worker). */
    closed: (): Promise<void> => Promise.resolve(),
  };
  return store;
}

export type Store = ReturnType<typeof createStore>;

export interface OpenStoreOptions {
  /**
   * The WAL checkpoint worker's program (wal-checkpointer.ts): given, the event loop's connections leave checkpoints
   * to it; omitted, they checkpoint as SQLite does by default.
   */
  checkpointWorker?: CheckpointWorkerEntry;
  /** Told why, should the checkpoint worker stop and the connections go back to SQLite's own checkpoints. */
  onCheckpointFallBack?: (reason: string) => void;
}

export function openStore(stateDir: string, options: OpenStoreOptions = {}): Store {
  const db = openDatabase(stateDir);
  const logDb = openLogConnection(stateDir);
  const journalDb = openJournalConnection(stateDir);
  const store = createStore(db, logDb, undefined, journalDb);
  if (!options.checkpointWorker) return store;
  const checkpointer = startWalCheckpointer(
    options.checkpointWorker,
    db.name,
    [db, logDb, journalDb],
    options.onCheckpointFallBack,
  );
  const close = store.close;
  let workerExited: Promise<void> = Promise.resolve();
  return Object.assign(store, {
    // The connections close first: the worker's last checkpoint then copies everything, and it may close its own
    // descriptors of the state file (which drop this process's locks on it) with no connection left to lose them.
    close: () => {
      close();
      workerExited = checkpointer.close();
    },
    // The worker may still be starting when the bridge closes, and would open the state file after the rest of
    // the store let go of it: whoever removes or moves the state directory waits for this.
    closed: () => workerExited,
  });
}
