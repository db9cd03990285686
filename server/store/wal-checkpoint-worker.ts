// The state file's WAL checkpoints, in a worker thread (started by wal-checkpointer.ts): every interval it copies
// what the WAL holds into the database file (PASSIVE: it never waits for, nor blocks, a reader or writer) on a
// connection of its own, so the copy and its fsyncs hold no event loop. Once the WAL file passes its bound it also
// restarts it (RESTART, briefly), which PASSIVE rounds never do while writes keep coming. Ends when told "close".
import fs from "node:fs";
import Database from "better-sqlite3";
import { parentPort, workerData } from "node:worker_threads";

interface CheckpointWorkerData {
  file: string;
  intervalMs: number;
  /** The WAL file's size past which a round also restarts it (database.ts WAL_SIZE_LIMIT_BYTES). */
  boundBytes: number;
  /** How long a restart may wait for the writer lock and for readers (wal-checkpointer.ts). */
  restartBusyTimeoutMs: number;
}

const { file, intervalMs, boundBytes, restartBusyTimeoutMs } = workerData as CheckpointWorkerData;
const db = new Database(file, { fileMustExist: true });
db.pragma("synchronous = NORMAL");
db.pragma("wal_autocheckpoint = 0");
// A lock held elsewhere (a backup) skips this round; the next one catches up.
db.pragma("busy_timeout = 0");

// Descriptors of the database file and its WAL, for the fsyncs a restart would otherwise make under the writer
// lock. Closed only after this worker's connection, once the store's own connections are closed (index.ts closes
// them first): closing any descriptor of the database file drops every POSIX lock this process holds on it, the
// connections' included (sqlite.org/howtocorrupt.html, 2.2).
const dbFd = fs.openSync(file, "r");
const walFd = fs.openSync(`${file}-wal`, "r");

/**
 * Only a writer that begins when every frame has been copied, and no reader still uses one, starts the WAL over
 * from its beginning: under steady writes a PASSIVE round never ends with nothing left to copy, so the file grew
 * for as long as the load lasted (issue 34: 187 MiB after 50 s). RESTART takes the writer lock, copies the frames
 * written since the PASSIVE round just before it, fsyncs the WAL and the database file and waits for readers of
 * older frames; the next writer then starts at the file's beginning and cuts it to journal_size_limit (the bound).
 * The event loop's writers wait for that lock meanwhile (their busy handler sleeps on the loop), so the restart is
 * kept short: both files are fsynced first, outside the lock, and one more PASSIVE round copies what was written
 * meanwhile, leaving the restart only a few frames to copy and fsync (without the first fsyncs, a test whose
 * database grew with the WAL had its writers wait past their 20 ms busy timeout for the PASSIVE rounds' dirty pages);
 * past a short wait for the lock or readers the round gives up (busy) and the next one tries again.
 * Not TRUNCATE: cutting a 64 MiB file takes 20-30 ms here, all of it under the writer lock.
 */
const restart = () => {
  fs.fsyncSync(walFd);
  fs.fsyncSync(dbFd);
  // What was written during those fsyncs, copied without the lock too.
  db.pragma("wal_checkpoint(PASSIVE)");
  db.pragma(`busy_timeout = ${restartBusyTimeoutMs}`);
  try {
    db.pragma("wal_checkpoint(RESTART)");
  } finally {
    db.pragma("busy_timeout = 0");
  }
};

const checkpoint = () => {
  try {
    db.pragma("wal_checkpoint(PASSIVE)");
    if (fs.fstatSync(walFd).size > boundBytes) restart();
  } catch {
    // SQLITE_BUSY: another checkpoint or a backup holds the lock (or an fsync failed); the next round tries again.
  }
};
const timer = setInterval(checkpoint, intervalMs);
parentPort!.on("message", (message: unknown) => {
  if (message === "checkpoint") checkpoint();
  if (message !== "close") return;
  clearInterval(timer);
  checkpoint();
  db.close();
  fs.closeSync(walFd);
  fs.closeSync(dbFd);
  parentPort!.close();
});
