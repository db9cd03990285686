// Backup and restore of the state database. A backup is SQLite's online backup API over a read-only connection of
// its own, so it is safe while the bridge writes: the copy is one consistent snapshot (one read transaction in WAL
// mode, which never blocks the bridge's writer), and the connection can change nothing. A restore installs such a
// file into a state directory whose bridge is stopped, after checking it and the capability key it needs.
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { capabilityKeyPath, createCapabilitySealer } from "./capability-key.js";
import { STATE_FILE_NAME } from "./database.js";
import { fsyncPath, writeFileDurably } from "./durable-file.js";
import { CAPABILITY_KEY_ID_SETTING } from "./migrations/003-sealed-capabilities.js";

/** The whole file in one step: one read transaction, so writes from the bridge cannot make the copy restart. */
const PAGES_PER_STEP = 0x7fffffff;
const CAPABILITY_KEY_BYTES = 32;

export interface BackupSummary {
  /** Highest schema migration in the copy. */
  schemaVersion: number;
  projects: number;
  sessions: number;
  journalEntries: number;
  /** Which capability key the copy's sessions were sealed under (capability-key.ts keyId); undefined before any. */
  capabilityKeyId: string | undefined;
  capabilities: number;
  bytes: number;
}

export class BackupError extends Error {}

/** Checks and counts a state database; `shownAs` is the name messages use (the file a caller gave). */
function summarize(file: string, shownAs = file): BackupSummary {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const check = db.pragma("quick_check", { simple: true });
    if (check !== "ok") throw new BackupError(`${shownAs} is damaged (SQLite quick_check: ${String(check)})`);
    const count = (table: string) => (db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
    const tables = new Set(
      (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>).map(
        (r) => r.name,
      ),
    );
    for (const table of ["schema_migrations", "settings", "projects", "sessions", "capabilities", "intents"]) {
      if (!tables.has(table)) throw new BackupError(`${shownAs} is not a urlbridge state database (no ${table} table)`);
    }
    const keyRow = db.prepare("SELECT value FROM settings WHERE key = ?").get(CAPABILITY_KEY_ID_SETTING) as
      { value: string } | undefined;
    return {
      schemaVersion:
        (db.prepare("SELECT MAX(version) AS v FROM schema_migrations").get() as { v: number | null }).v ?? 0,
      projects: count("projects"),
      sessions: count("sessions"),
      journalEntries: count("intents"),
      capabilityKeyId: keyRow?.value,
      capabilities: count("capabilities"),
      bytes: fs.statSync(file).size,
    };
  } catch (error) {
    if (error instanceof BackupError) throw error;
    throw new BackupError(`${shownAs} cannot be read as a urlbridge state database (${(error as Error).message})`);
  } finally {
    db.close();
  }
}

/** Copies <stateDir>/urlbridge.sqlite to `destination` (0600, written beside it and renamed into place). */
export async function backupDatabase(stateDir: string, destination: string): Promise<BackupSummary> {
  const source = path.join(stateDir, STATE_FILE_NAME);
  if (!fs.existsSync(source))
    throw new BackupError(`no state database at ${source}; is URLBRIDGE_STATE_DIR the bridge's state directory?`);
  const temp = `${destination}.partial-${process.pid}`;
  // Read-only: this connection never writes, checkpoints or truncates the bridge's WAL.
  const db = new Database(source, { readonly: true, fileMustExist: true });
  try {
    fs.closeSync(fs.openSync(temp, "w", 0o600));
    await db.backup(temp, { progress: () => PAGES_PER_STEP });
    // The copy inherits WAL mode from its source; a file on its own should not need -wal and -shm beside it
    // (the bridge that opens a restored copy turns WAL back on).
    const copy = new Database(temp, { fileMustExist: true });
    copy.pragma("journal_mode = DELETE");
    copy.close();
  } catch (error) {
    fs.rmSync(temp, { force: true });
    throw new BackupError(`backup of ${source} failed (${(error as Error).message})`);
  } finally {
    db.close();
  }
  try {
    const summary = summarize(temp);
    fsyncPath(temp);
    fs.renameSync(temp, destination);
    return summary;
  } catch (error) {
    fs.rmSync(temp, { force: true });
    throw error;
  }
}

export interface RestoreOptions {
  /** The backed-up bridge's <state>/capability-key, installed with the database. */
  keyFile?: string;
}

export interface RestoreResult extends BackupSummary {
  /** Where the database that was replaced now lives, when there was one. */
  previous: string | undefined;
  keyInstalled: boolean;
}

function keyIdOf(key: Buffer, file: string): string {
  if (key.length !== CAPABILITY_KEY_BYTES)
    throw new BackupError(
      `${file} holds ${key.length} bytes, not ${CAPABILITY_KEY_BYTES}: not a urlbridge capability key`,
    );
  return createCapabilitySealer(key).keyId;
}

/**
 * Installs `backup` as <stateDir>/urlbridge.sqlite. The bridge on that state directory must be stopped (the CLI
 * checks). Refuses a file that is not a sound state database, and one whose sessions were sealed under a
 * capability key other than the one it would run with: their URLs would all be replaced on the next start.
 */
export function restoreDatabase(stateDir: string, backup: string, options: RestoreOptions = {}): RestoreResult {
  if (!fs.existsSync(backup)) throw new BackupError(`no backup at ${backup}`);
  const keyFile = capabilityKeyPath(stateDir);
  const key = options.keyFile
    ? fs.readFileSync(options.keyFile)
    : fs.existsSync(keyFile)
      ? fs.readFileSync(keyFile)
      : undefined;
  const keyId = key ? keyIdOf(key, options.keyFile ?? keyFile) : undefined;

  fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const target = path.join(stateDir, STATE_FILE_NAME);
  const temp = `${target}.restore-${process.pid}`;
  // Checked as the copy it installs: the backup itself may sit on a read-only mount, where SQLite cannot open a
  // file left in WAL mode (a plain copy of a live database) even for reading.
  fs.copyFileSync(backup, temp);
  let summary: BackupSummary;
  try {
    fs.chmodSync(temp, 0o600);
    summary = summarize(temp, backup);
    if (summary.capabilities > 0 && summary.capabilityKeyId !== keyId) {
      const have = options.keyFile
        ? `${options.keyFile} is key ${keyId}`
        : key
          ? `${keyFile} is key ${keyId}`
          : `${keyFile} does not exist`;
      throw new BackupError(
        `the backup's sessions were sealed under capability key ${summary.capabilityKeyId}, and ${have}; pass --key <file> with the capability-key file of the bridge the backup came from (restoring without it would give every session new URLs)`,
      );
    }
    // A WAL-mode copy got an empty -wal and -shm from the read-only check: nothing in them, nothing to keep.
    for (const suffix of ["-wal", "-shm"]) fs.rmSync(temp + suffix, { force: true });
    fsyncPath(temp);
  } catch (error) {
    for (const suffix of ["", "-wal", "-shm"]) fs.rmSync(temp + suffix, { force: true });
    throw error;
  }
  let previous: string | undefined;
  if (fs.existsSync(target)) {
    // Fold the old WAL into its database first, so the kept copy is whole and no stale -wal meets the new file.
    const old = new Database(target, { fileMustExist: true });
    old.pragma("wal_checkpoint(TRUNCATE)");
    old.close();
    previous = `${target}.before-restore`;
    fs.renameSync(target, previous);
  }
  for (const suffix of ["-wal", "-shm"]) fs.rmSync(target + suffix, { force: true });
  fs.renameSync(temp, target);
  let keyInstalled = false;
  if (options.keyFile && key) {
    writeFileDurably(keyFile, key, { mode: 0o600, exclusive: false });
    keyInstalled = true;
  }
  fsyncPath(stateDir);
  return { ...summary, previous, keyInstalled };
}
