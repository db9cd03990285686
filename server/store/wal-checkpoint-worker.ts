// The state file's WAL checkpoints, in a worker thread (started by wal-checkpointer.ts): every interval it copies
// what the WAL holds into the database file (PASSIVE: it never waits for, nor blocks, a reader or writer) on a
// connection of its own, so the copy and its fsyncs hold no event loop. Ends when told "close".
import Database from "better-sqlite3";
import { parentPort, workerData } from "node:worker_threads";

interface CheckpointWorkerData {
  file: string;
  intervalMs: number;
}

const { file, intervalMs } = workerData as CheckpointWorkerData;
const db = new Database(file, { fileMustExist: true });
db.pragma("synchronous = NORMAL");
db.pragma("wal_autocheckpoint = 0");
// A lock held elsewhere (a backup) skips this round; the next one catches up.
db.pragma("busy_timeout = 0");

const checkpoint = () => {
  try {
    db.pragma("wal_checkpoint(PASSIVE)");
  } catch {
    // SQLITE_BUSY: another checkpoint or a backup holds the lock; the next round tries again.
  }
};
const timer = setInterval(checkpoint, intervalMs);
parentPort!.on("message", (message: unknown) => {
  if (message === "checkpoint") checkpoint();
  if (message !== "close") return;
  clearInterval(timer);
  checkpoint();
  db.close();
  parentPort!.close();
});
