// Crash-safe file operations on held paths (server/sandbox/fd-walk.ts): every write goes to a temp file in the
// checked directory, is fsynced, renamed over the target in that same directory and the directory fsynced, so a
// reader (or a crash) sees the old bytes or the new, never half, and nothing lands outside the root. The fsyncs
// run in the thread pool (durable-write.ts); a journaled write changes the tree only once its intent is durable.
import fs from "node:fs";
import path from "node:path";
import type { HeldPath } from "../../sandbox/fd-walk.js";
import { closeQuietly, fdPath, O_PATH } from "../../sandbox/fd-walk.js";
import { makeDirectoriesIn, ownerForNewFiles, removeFileIn, writeFileIn } from "../../sandbox/fd-ops.js";
import type { Identity } from "../../sandbox/identity.js";
import { bridgeIsRoot } from "../../sandbox/identity.js";
import { writeFileDurably } from "./durable-write.js";

export interface HeldWriteOptions {
  /** Permission bits to give the file (e.g. the replaced file's). Default: 0o666 minus the umask. */
  mode?: number;
  /** URLBRIDGE_AGENT_UID/GID, for new files when the bridge is root and the root is root's. */
  agentFallback?: Identity;
  /**
   * The intent's ctx.intent.durable(): awaited before the tree changes at all (the rename over an existing file,
   * overlapped with the temp file's fsync; the first mkdir of a new file's folders).
   */
  journaled?: () => Promise<void>;
  /**
   * Both fsyncs on the event loop, at once (fd-ops writeFileIn): on a saturated loop, where each thread-pool trip
   * would cost a long event-loop turn (server/mutation/journal/inline-sync.ts).
   */
  inline?: boolean;
  /**
   * Resolve once the file is renamed into place, its directory's fsync still running (the result's
   * directorySynced): single-file.ts hands it to the journal, so the tool returns (and the project's write queue is
   * released) at the rename while the answer waits for it. Ignored when inline.
   */
  deferDirectorySync?: boolean;
}

/** The directory fsync a write may leave running (HeldWriteOptions.deferDirectorySync); resolved otherwise. */
export interface HeldWriteResult {
  directorySynced: Promise<void>;
}

const SYNCED: HeldWriteResult = { directorySynced: Promise.resolve() };

/**
 * Takes a second reference to the inode a write is about to replace, and returns the function that drops it from
 * the thread pool once the walk has closed its own. The last close of a replaced file frees its inode and blocks
 * (ext4: 0.1-0.5 ms); without this it would be the walk's close, on the event loop.
 */
export function freeReplacedInodeInPool(target: HeldPath): () => void {
  if (target.fd === undefined) return () => undefined;
  let fd: number;
  try {
    fd = fs.openSync(fdPath(target.fd), O_PATH);
  } catch {
    return () => undefined;
  }
  // After the walk's close, which runs as soon as the write's promise settles (withHeldPathAsync's finally).
  return () => setImmediate(() => fs.close(fd, () => undefined));
}

/**
 * Writes the file a held path names. An existing file is replaced keeping its owner (when root); a new one is
 * created with any missing directories, each made and entered by descriptor, all given the project owner.
 */
export async function writeHeldFile(
  target: HeldPath,
  bytes: Buffer,
  options: HeldWriteOptions = {},
): Promise<HeldWriteResult> {
  const mode = options.mode === undefined ? {} : { mode: options.mode };
  const defer = options.deferDirectorySync ? { deferDirectorySync: true } : {};
  if (target.exists) {
    const owner = bridgeIsRoot() && target.stats ? { uid: target.stats.uid, gid: target.stats.gid } : undefined;
    const release = freeReplacedInodeInPool(target);
    try {
      if (options.inline) {
        await options.journaled?.();
        writeFileIn(target.dirFd, target.name, bytes, { ...mode, ...(owner ? { owner } : {}) });
        return SYNCED;
      }
      const beforeRename = options.journaled?.();
      return await writeFileDurably(target.dirFd, target.name, bytes, {
        ...mode,
        ...(owner ? { owner } : {}),
        ...(beforeRename ? { beforeRename } : {}),
        ...defer,
      });
    } finally {
      release();
    }
  }
  const owner = ownerForNewFiles(target.rootFd, options.agentFallback);
  if (options.journaled && target.pending.length > 1) await options.journaled();
  const dir = await makeDirectoriesIn(target.dirFd, target.pending.slice(0, -1), owner);
  try {
    if (options.inline) {
      if (target.pending.length <= 1) await options.journaled?.();
      writeFileIn(dir, target.name, bytes, { ...mode, ...(owner ? { owner } : {}) });
      return SYNCED;
    }
    const beforeRename = target.pending.length > 1 ? undefined : options.journaled?.();
    return await writeFileDurably(dir, target.name, bytes, {
      ...mode,
      ...(owner ? { owner } : {}),
      ...(beforeRename ? { beforeRename } : {}),
      ...defer,
    });
  } finally {
    if (dir !== target.dirFd) closeQuietly(dir);
  }
}

/** Removes the file a held path names, if it exists; true when something was removed. */
export async function removeHeldFile(target: HeldPath): Promise<boolean> {
  if (!target.exists || target.name === "") return false;
  return removeFileIn(target.dirFd, target.name);
}

/** Host paths of the directories writing a new held target will create, outermost first. */
export function directoriesToCreate(target: HeldPath): string[] {
  if (target.exists) return [];
  const existing = target.parts.length - target.pending.length;
  const out: string[] = [];
  for (let n = existing + 1; n < target.parts.length; n++)
    out.push(path.join(target.root, ...target.parts.slice(0, n)));
  return out;
}
