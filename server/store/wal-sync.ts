// Group commit for the journal's connection. It commits with synchronous=NORMAL, so a commit is written to the
// WAL file (it survives the process dying) without an fsync; durable() then fsyncs that WAL file through the
// thread pool, which is what synchronous=FULL would have done on the event loop at every commit. One fsync
// covers every commit made before it started, so concurrent intents share it.
import fs from "node:fs";
import path from "node:path";
import type { Db } from "./database.js";

/** SQLite's value of PRAGMA synchronous for FULL and EXTRA: each commit already fsyncs, durable() has nothing to do. */
const SYNCHRONOUS_FULL = 2;

export interface WalSync {
  /**
   * Resolves once every commit this connection made before the call is on stable storage (power loss
   * included); rejects with the fsync's error. Never blocks the event loop.
   */
  durable(): Promise<void>;
  /**
   * The same on the event loop, at once: for a caller whose wait for a thread-pool trip would hold up others
   * queued behind it (the file tools under contention, mutation/files/single-file.ts). Throws the fsync's error.
   */
  durableSync(): void;
  /** fsyncs made so far (for tests and diagnostics). */
  readonly syncs: number;
  close(): void;
}

export function createWalSync(db: Db): WalSync {
  const walMode = String(db.pragma("journal_mode", { simple: true })).toLowerCase() === "wal";
  if (!walMode || Number(db.pragma("synchronous", { simple: true })) >= SYNCHRONOUS_FULL) {
    return { durable: () => Promise.resolve(), durableSync: () => undefined, syncs: 0, close: () => undefined };
  }
  const wal = `${db.name}-wal`;
  // The WAL file exists while any connection is open (the journal connection read the schema already), and
  // keeps its inode until the last one closes: SQLite resets and truncates it in place, never replaces it.
  const fd = fs.openSync(wal, "r");
  // Its directory entry must survive power loss too, as SQLite's first FULL sync of a new WAL makes sure.
  syncDirectoryOf(wal);
  let syncs = 0;
  let closed = false;
  let running: Promise<void> | undefined;
  let queued: Promise<void> | undefined;

  const flush = (): Promise<void> => {
    // Once closed, the connection is gone and the last one to close checkpoints the WAL into the synced database.
    if (closed) return Promise.resolve();
    syncs += 1;
    const done = new Promise<void>((resolve, reject) => fs.fsync(fd, (error) => (error ? reject(error) : resolve())));
    const settled = () => {
      running = undefined;
    };
    // `running` never rejects (the caller holds `done`), so no rejection goes unhandled.
    running = done.then(settled, settled);
    return done;
  };

  return {
    durable(): Promise<void> {
      if (!running) return flush();
      // An fsync already under way may have started before this caller's commit: wait for the next one, which
      // every caller arriving meanwhile shares.
      queued ??= running.then(() => {
        queued = undefined;
        return flush();
      });
      return queued;
    },
    durableSync(): void {
      if (closed) return;
      syncs += 1;
      fs.fsyncSync(fd);
    },
    get syncs() {
      return syncs;
    },
    close: () => {
      if (closed) return;
      closed = true;
      // An fsync still running in the pool keeps its descriptor until it is done, never a reused number.
      if (running) void running.then(() => fs.closeSync(fd));
      else fs.closeSync(fd);
    },
  };
}

function syncDirectoryOf(file: string): void {
  const dir = fs.openSync(path.dirname(file), "r");
  try {
    fs.fsyncSync(dir);
  } finally {
    fs.closeSync(dir);
  }
}
