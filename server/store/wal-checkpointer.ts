// Who copies the WAL into the database file. SQLite's default is whichever connection's commit finds the WAL past
// 1,000 pages: a commit on the event loop then copies megabytes and fsyncs the file, every other session waiting
// (issue 34: ~30 ms an auto-checkpoint, once per 4 MiB written, and a 10 MB file's review contents are 10 MB). Here
// the event loop's connections never checkpoint; a worker thread (wal-checkpoint-worker.ts) does, every interval.
// Past the WAL's bound the worker also restarts it, so its size stays bounded under any load. Should the worker
// fail, the connections checkpoint as before.
import { Worker } from "node:worker_threads";
import { WAL_SIZE_LIMIT_BYTES, type Db } from "./database.js";

/** How often the worker checkpoints: the WAL grows by at most what the bridge writes in this time. */
export const WAL_CHECKPOINT_INTERVAL_MS = 250;
/**
 * How long the worker's restart of a WAL past its bound may wait for the writer lock and for readers. It waits for
 * readers while it holds the writer lock, which the event loop's writers then wait for on the loop: past this it
 * gives up and the next round tries again. The loop's writers wait for this plus the restart's own copy and fsync of
 * the frames written since the PASSIVE round just before it: 3-20 ms measured at load 8-10 (a writer's busy timeout
 * is 20 ms; a restart preempted past it fails that write with SQLITE_BUSY: once in ~40 restarts of a synthetic
 * writing 64 MiB every 5 s at load 9, never in the soak).
 */
export const WAL_RESTART_BUSY_TIMEOUT_MS = 3;
/** SQLite's own auto-checkpoint, in pages: what the connections go back to should the worker fail. */
const SQLITE_AUTOCHECKPOINT_PAGES = 1000;
/** How long close waits for the worker's last checkpoint before it stops the thread outright. */
const CLOSE_BOUND_MS = 5_000;

/** A worker program to start (kernel/worker/worker-entry.ts gives one). */
export interface CheckpointWorkerEntry {
  file: URL;
  workerData?: object;
  /**
   * The worker starts once this settles; omitted, at once. The bridge starts it after its planes listen: creating
   * the thread is ~5 ms of the event loop and its start-up competes for the cores with the first answers (issue 34).
   * Until then the connections checkpoint as SQLite does by default.
   */
  startAfter?: Promise<unknown>;
}

export interface WalCheckpointer {
  /** Checkpoints now (tests; the worker also does every interval). */
  nudge(): void;
  /**
   * Stops the worker: it checkpoints once more and closes its connection. Resolves once the worker has exited, so
   * nothing opens or writes the state file afterwards (a worker still starting up opens it when it gets there). A
   * worker not started yet never starts.
   */
  close(): Promise<void>;
  /** True while the worker runs and the connections leave checkpoints to it. */
  running(): boolean;
}

/**
 * Starts the worker (at once, or once `entry.startAfter` settles). `onFallBack` hears, once, why the worker stopped
 * while the bridge still needed it, when the connections went back to SQLite's own checkpoints (the bridge logs it:
 * the fallback is safe but slower).
 */
export function startWalCheckpointer(
  entry: CheckpointWorkerEntry,
  file: string,
  connections: Db[],
  onFallBack: (reason: string) => void = () => {},
): WalCheckpointer {
  let worker: Worker | undefined;
  let exited: Promise<void> = Promise.resolve();
  let alive = false;
  let closed = false;
  const setAuto = (pages: number) => {
    for (const db of connections) if (db.open) db.pragma(`wal_autocheckpoint = ${pages}`);
  };
  const fallBack = (reason: string) => {
    if (!alive) return;
    alive = false;
    setAuto(SQLITE_AUTOCHECKPOINT_PAGES);
    onFallBack(reason);
  };
  const start = () => {
    if (closed) return;
    const started = new Worker(entry.file, {
      workerData: {
        ...entry.workerData,
        file,
        intervalMs: WAL_CHECKPOINT_INTERVAL_MS,
        boundBytes: WAL_SIZE_LIMIT_BYTES,
        restartBusyTimeoutMs: WAL_RESTART_BUSY_TIMEOUT_MS,
      },
    });
    started.unref();
    exited = new Promise<void>((resolve) => started.once("exit", () => resolve()));
    started.on("error", (error) => fallBack(error.message));
    started.on("exit", (code) => fallBack(`the worker exited with code ${code}`));
    worker = started;
    alive = true;
    setAuto(0);
  };
  // Deferred, a thread that cannot be created is what a worker that failed is: the connections keep SQLite's own.
  const startLater = () => {
    try {
      start();
    } catch (error) {
      onFallBack(error instanceof Error ? error.message : String(error));
    }
  };
  if (entry.startAfter) void entry.startAfter.then(startLater, startLater);
  else start();
  return {
    nudge: () => {
      if (alive) worker?.postMessage("checkpoint");
    },
    close: async () => {
      closed = true;
      if (!worker) return;
      if (alive) {
        alive = false;
        worker.postMessage("close");
      }
      // Whoever awaits this waits for the exit: the worker keeps the process up until then (a process left with
      // nothing else to do, such as one closing after a fatal fault, would otherwise end with code 0 meanwhile).
      worker.ref();
      const running = worker;
      const bound = setTimeout(() => void running.terminate(), CLOSE_BOUND_MS);
      bound.unref();
      await exited;
      clearTimeout(bound);
    },
    running: () => alive,
  };
}
