// Opens the single SQLite state file (WAL, mode 0600) and brings its schema up to date.
// Every schema change is a numbered migration in ./migrations, applied once inside a transaction.
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { migrations } from "./migrations/index.js";

export type Db = Database.Database;

export const STATE_FILE_NAME = "urlbridge.sqlite";
/** How long an activity flush waits for another connection's lock before it backs off. */
export const ACTIVITY_BUSY_TIMEOUT_MS = 20;
/**
 * How long one journal statement waits for a lock another process holds (a backup tool, a second writer). Every
 * statement runs on the event loop, so this is how long such a lock may stall every call, the control plane's
 * included; past it the write fails with SQLITE_BUSY and the journal answers or retries without blocking
 * (store-refusals.ts admission, journal.ts recording).
 */
export const JOURNAL_BUSY_TIMEOUT_MS = 20;
/** At start-up nothing is served yet, so opening and migrating may wait longer for another process's lock. */
const OPEN_BUSY_TIMEOUT_MS = 5000;

/**
 * The WAL file's bound. The first commit after the WAL starts over cuts the file back to this size: without a limit
 * SQLite keeps it at the largest size one burst ever reached, so it only grows. Under steady writes the WAL never
 * starts over by itself; the checkpoint worker restarts it once the file passes this size (wal-checkpoint-worker.ts),
 * so the file stays near it (plus what is written until a restart gets the lock: 67-74 MiB peaks in the soak). 64 MiB
 * rather than a few: the cut is an ftruncate on the event loop, inside that commit, and costs by what it frees
 * (~0.3-0.5 ms a MiB here), so the file is reused from its start at this size instead of being cut down and grown
 * again every second under load (issue 34).
 */
export const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

/**
 * Runs its argument inside one transaction on `db` (nested calls become savepoints). One transaction function for
 * every call: better-sqlite3 builds a wrapper and its deferred/immediate/exclusive variants per db.transaction()
 * call, which a closure per commit paid every time (~7-13 µs).
 */
export function transactionRunner(db: Db): <T>(fn: () => T) => T {
  const inTransaction = db.transaction((fn: () => unknown) => fn());
  return <T>(fn: () => T): T => inTransaction(fn) as T;
}

export function openDatabase(stateDir: string): Db {
  fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const file = path.join(stateDir, STATE_FILE_NAME);
  // Create the file 0600 before SQLite opens it: SQLite gives its -wal and -shm files the database's mode.
  fs.closeSync(fs.openSync(file, "a", 0o600));
  fs.chmodSync(file, 0o600);
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  // FULL makes an acknowledged intent durable across power loss, not only process death.
  db.pragma("synchronous = FULL");
  db.pragma("foreign_keys = ON");
  db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
  db.pragma(`busy_timeout = ${OPEN_BUSY_TIMEOUT_MS}`);
  migrate(db);
  db.pragma(`busy_timeout = ${JOURNAL_BUSY_TIMEOUT_MS}`);
  for (const suffix of ["-wal", "-shm"]) {
    if (fs.existsSync(file + suffix)) fs.chmodSync(file + suffix, 0o600);
  }
  return db;
}

/**
 * The intent journal's own connection, committing with synchronous=NORMAL: a commit is written to the WAL
 * (it survives the process dying) without an fsync on the event loop. The journal makes it durable against
 * power loss where that matters, before a mutation's first side effect and before any answer that
 * acknowledges an intent, through WalSync (wal-sync.ts): one fsync of the WAL file in the thread pool, shared
 * by every commit made before it, which is exactly the fsync synchronous=FULL makes after each commit.
 * Everything else (sessions, projects, staging) stays on the main connection, FULL.
 */
export function openJournalConnection(stateDir: string): Db {
  const db = new Database(path.join(stateDir, STATE_FILE_NAME));
  db.pragma("synchronous = NORMAL");
  db.pragma("foreign_keys = ON");
  db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
  db.pragma(`busy_timeout = ${JOURNAL_BUSY_TIMEOUT_MS}`);
  return db;
}

/**
 * A second connection for the activity log, committing with synchronous=NORMAL: in WAL mode a commit then
 * survives a process crash but skips the fsync, which would otherwise cost every read-only call one disk
 * flush. Losing the last activity rows on power loss is acceptable; losing a journal intent is not.
 */
export function openLogConnection(stateDir: string): Db {
  const db = new Database(path.join(stateDir, STATE_FILE_NAME));
  db.pragma("synchronous = NORMAL");
  db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
  // Short on purpose: this connection writes from a timer on the event loop, and a lock held elsewhere (a backup,
  // another writer) must not stall every call; a busy flush keeps its rows and retries later (activity.ts).
  db.pragma(`busy_timeout = ${ACTIVITY_BUSY_TIMEOUT_MS}`);
  return db;
}

/**
 * Migrations recorded in the database that this build does not have: a newer build ran on this state and this one
 * was rolled back onto it (deploy/UPGRADE.md). The older build ignores the newer tables; bridge.ts warns.
 */
export function newerMigrations(db: Db): Array<{ version: number; name: string }> {
  const known = Math.max(0, ...migrations.map((m) => m.version));
  return db
    .prepare("SELECT version, name FROM schema_migrations WHERE version > ? ORDER BY version")
    .all(known) as Array<{ version: number; name: string }>;
}

export function migrate(db: Db): void {
  db.exec(
    "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)",
  );
  const applied = new Set(
    (db.prepare("SELECT version FROM schema_migrations").all() as Array<{ version: number }>).map((r) => r.version),
  );
  const ordered = [...migrations].sort((a, b) => a.version - b.version);
  let scrub = false;
  for (const migration of ordered) {
    if (applied.has(migration.version)) continue;
    if (migration.scrub) {
      db.pragma("secure_delete = ON");
      scrub = true;
    }
    db.transaction(() => {
      db.exec(migration.sql);
      migration.up?.(db);
      db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)").run(
        migration.version,
        migration.name,
        Date.now(),
      );
    })();
  }
  if (scrub) {
    // Freed pages were zeroed as they went; VACUUM rewrites the file without any free space, and the WAL, which
    // may still hold old page images, is checkpointed and cut to zero bytes.
    db.exec("VACUUM");
    db.pragma("wal_checkpoint(TRUNCATE)");
    db.pragma("secure_delete = OFF");
  }
}
