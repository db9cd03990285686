// The atomic write of server/sandbox/fd-ops.ts writeFileIn (temp file created O_EXCL|O_NOFOLLOW in the held
// directory, filled, fsynced, renamed over the target there, the directory fsynced: the same calls in the same
// order), with the create, both fsyncs, the rename (and a large file's write) in the thread pool instead of on the
// event loop, and the rename held until the journal says the intent is durable, so that wait overlaps the temp
// file's fsync instead of adding to it.
import fs from "node:fs";
import {
  fillTempFile,
  replaceThroughTempFileInPool,
  setTempFileOwnerAndMode,
  type WriteInOptions,
} from "../../sandbox/fd-ops.js";
import { fdPath } from "../../sandbox/fd-walk.js";

const { O_RDONLY, O_DIRECTORY } = fs.constants;

export interface DurableWriteOptions extends WriteInOptions {
  /** Awaited (with the temp file's fsync) before the rename: the target changes only once this resolves. */
  beforeRename?: Promise<void>;
  /**
   * Resolve as soon as the rename is done, with the directory's fsync still running (`directorySynced`), so the
   * caller can overlap it with its own work. Default: resolve once the directory is synced too.
   */
  deferDirectorySync?: boolean;
}

export interface DurableWriteResult {
  /** Settles when the directory's fsync has: the rename survives power loss once it resolves. */
  directorySynced: Promise<void>;
}

/**
 * Contents above this are written to the temp file through the thread pool: a 10 MB write held the event loop ~3-7
 * ms (issue 34); below it one trip costs more than the write.
 */
export const POOL_WRITE_BYTES = 256 * 1024;

/** One write(2) in the thread pool; how many bytes it wrote. */
function writeInPool(fd: number, bytes: Buffer, offset: number): Promise<number> {
  return new Promise((resolve, reject) =>
    fs.write(fd, bytes, offset, bytes.length - offset, null, (error, written) =>
      error ? reject(error) : resolve(written),
    ),
  );
}

/** fillTempFile, with the bytes of a large file written through the thread pool. */
async function fillTempFileInPool(fd: number, bytes: Buffer, options: WriteInOptions): Promise<void> {
  if (bytes.length <= POOL_WRITE_BYTES) return fillTempFile(fd, bytes, options);
  let offset = 0;
  while (offset < bytes.length) offset += await writeInPool(fd, bytes, offset);
  setTempFileOwnerAndMode(fd, options);
}

/** fsyncs a descriptor in the thread pool. */
export function fsyncInPool(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fs.fsync(fd, (error) => (error ? reject(error) : resolve())));
}

/** fsyncs a held directory through the thread pool, so a rename, create or unlink in it survives power loss. */
export async function syncDirectoryInPool(dirFd: number): Promise<void> {
  const fd = fs.openSync(fdPath(dirFd), O_RDONLY | O_DIRECTORY);
  try {
    await fsyncInPool(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Writes `name` in a held directory atomically: a reader (or a crash) sees the old bytes or the new, never half;
 * whatever `name` is now (even a symlink) is replaced, never followed. Four thread-pool trips: the create, the temp
 * file's fsync (while `beforeRename` is awaited), the rename, and the directory's fsync after it (awaited here unless
 * deferDirectorySync; the directory is reopened for it before this returns, so `dirFd` may close at once).
 */
export async function writeFileDurably(
  dirFd: number,
  name: string,
  bytes: Buffer,
  options: DurableWriteOptions = {},
): Promise<DurableWriteResult> {
  // Handled here too, so that a rejection is never unhandled when the temp file cannot even be created.
  options.beforeRename?.catch(() => undefined);
  await replaceThroughTempFileInPool(dirFd, name, async (fd) => {
    await fillTempFileInPool(fd, bytes, options);
    // Both settle before the descriptor closes: an fsync still running in the pool never meets a reused number.
    const [synced, journaled] = await Promise.allSettled([fsyncInPool(fd), options.beforeRename]);
    if (journaled.status === "rejected") throw journaled.reason;
    if (synced.status === "rejected") throw synced.reason;
  });
  const directorySynced = syncDirectoryInPool(dirFd);
  if (!options.deferDirectorySync) await directorySynced;
  return { directorySynced };
}
