// File operations on descriptors a containment walk holds: read, list, create, rename and remove inside a
// checked directory through /proc/self/fd/<dir>/<name>, so the directory acted in is the one that was checked
// and a final component is never followed (O_NOFOLLOW, O_EXCL, rename and unlink do not follow it).
import { randomUUID } from "node:crypto";
import type { Dirent } from "node:fs";
import fs from "node:fs";
import fsp from "node:fs/promises";
import { promisify } from "node:util";
import { agentIdentity, bridgeIsRoot, type Identity } from "./identity.js";
import { closeQuietly, fdPath, O_PATH } from "./proc-fd.js";

const { O_RDONLY, O_NONBLOCK, O_NOCTTY, O_NOFOLLOW, O_DIRECTORY, O_CREAT, O_EXCL, O_WRONLY } = fs.constants;
/** Non-blocking so a FIFO swapped in can never stall the event loop (it is refused after fstat). */
const READ_FLAGS = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW;
/** How a temp file is created in a held directory: new, never through a link. */
export const CREATE_FLAGS = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY;

/** Files up to this size are read without leaving the event loop; larger ones through the thread pool. */
export const SYNC_READ_MAX_BYTES = 256 * 1024;
export const TEMP_SUFFIX = ".urlbridge-tmp";
/** Who new files belong to when the bridge is root and the project's configuration names nobody. */
export const DEFAULT_AGENT_FALLBACK: Identity = { uid: 1000, gid: 1000 };

/** Reopens an O_PATH descriptor for reading (same inode, no path walked). The caller closes it. */
export function reopenForReading(pathFd: number): number {
  return fs.openSync(fdPath(pathFd), O_RDONLY | O_NONBLOCK | O_NOCTTY);
}

/** Reads an open regular file from its start, up to `size` bytes (less if it shrank meanwhile). */
export function readOpenFile(fd: number, size: number): Buffer {
  const buffer = Buffer.allocUnsafe(size);
  let filled = 0;
  while (filled < size) {
    const n = fs.readSync(fd, buffer, filled, size - filled, filled);
    if (n === 0) break;
    filled += n;
  }
  return filled === size ? buffer : buffer.subarray(0, filled);
}

function readAsync(fd: number, buffer: Buffer, offset: number, position: number): Promise<number> {
  return new Promise((resolve, reject) =>
    fs.read(fd, buffer, offset, buffer.length - offset, position, (error, n) => (error ? reject(error) : resolve(n))),
  );
}

/** Whole file behind an open descriptor; small files synchronously (a promise read costs ~250 µs of round trips). */
export async function readOpenFileAsync(fd: number, size: number): Promise<Buffer> {
  if (size <= SYNC_READ_MAX_BYTES) return readOpenFile(fd, size);
  const buffer = Buffer.allocUnsafe(size);
  let filled = 0;
  while (filled < size) {
    const n = await readAsync(fd, buffer, filled, filled);
    if (n === 0) break;
    filled += n;
  }
  return filled === size ? buffer : buffer.subarray(0, filled);
}

/** Bytes of the regular file an O_PATH descriptor names. */
export async function readHeldFile(pathFd: number, size: number): Promise<Buffer> {
  const fd = reopenForReading(pathFd);
  try {
    return await readOpenFileAsync(fd, size);
  } finally {
    closeQuietly(fd);
  }
}

/** Synchronous readHeldFile, for /r (see server/kernel/read/file-read.ts). */
export function readHeldFileSync(pathFd: number, size: number): Buffer {
  const fd = reopenForReading(pathFd);
  try {
    return readOpenFile(fd, size);
  } finally {
    closeQuietly(fd);
  }
}

/**
 * Opens `name` in a held directory for reading, never following it, and fstats the open file. Undefined when
 * it is gone, a symlink, or cannot be opened (a socket), unless throwOnError; the caller closes `fd` and checks the kind.
 */
export function openInDirectory(
  dirFd: number,
  name: string,
  options: { throwOnError?: boolean } = {},
): { fd: number; info: fs.Stats } | undefined {
  let fd: number;
  try {
    fd = fs.openSync(fdPath(dirFd, name), READ_FLAGS);
  } catch (error) {
    if (options.throwOnError) throw error;
    return undefined;
  }
  try {
    return { fd, info: fs.fstatSync(fd) };
  } catch (error) {
    closeQuietly(fd);
    throw error;
  }
}

/** The bytes of regular file `name` in a held directory, when it is one of at most maxBytes. */
export async function readFileInDirectory(dirFd: number, name: string, maxBytes: number): Promise<Buffer | undefined> {
  const opened = openInDirectory(dirFd, name);
  if (!opened) return undefined;
  try {
    if (!opened.info.isFile() || opened.info.size > maxBytes) return undefined;
    return await readOpenFileAsync(opened.fd, opened.info.size);
  } finally {
    closeQuietly(opened.fd);
  }
}

/** lstat of `name` in a held directory; undefined when gone. */
export function lstatInDirectory(dirFd: number, name: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(fdPath(dirFd, name), { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

/** O_PATH descriptor of subdirectory `name`, or undefined when it is not a real directory (now). */
export function openSubdirectory(dirFd: number, name: string): number | undefined {
  try {
    return fs.openSync(fdPath(dirFd, name), O_PATH | O_NOFOLLOW | O_DIRECTORY);
  } catch {
    return undefined;
  }
}

export function listDirectorySync(dirFd: number): string[] {
  return fs.readdirSync(fdPath(dirFd));
}

export function listDirectory(dirFd: number): Promise<Dirent[]> {
  return fsp.readdir(fdPath(dirFd), { withFileTypes: true });
}

/**
 * fsyncs a held directory so a rename, create or unlink inside it survives power loss. Synchronous on purpose,
 * like the write path below: an fsync costs ~0.1-0.2 ms on a local disk, while each thread-pool round trip
 * waits for an event-loop turn, which under load (200 calls in flight) is what made a journaled write take a
 * second (docs/RELIABILITY.md, soak).
 */
export function syncDirectory(dirFd: number): void {
  const fd = fs.openSync(fdPath(dirFd), O_RDONLY | O_DIRECTORY);
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Who the file tools' new files and directories belong to: the project owner when the bridge is root
 * (server/sandbox/identity.ts), else nobody in particular (they stay the bridge's own).
 */
export function ownerForNewFiles(rootFd: number, fallback: Identity | undefined): Identity | undefined {
  if (!bridgeIsRoot()) return undefined;
  const info = fs.fstatSync(rootFd);
  return agentIdentity({ uid: info.uid, gid: info.gid }, fallback ?? DEFAULT_AGENT_FALLBACK);
}

export interface WriteInOptions {
  /** Permission bits to give the file (e.g. the replaced file's). Default: 0o666 minus the umask. */
  mode?: number;
  /** uid/gid to give the file (a new file's agent identity, a replaced file's own); only when root. */
  owner?: Identity;
}

/** The temp file name writeFileIn uses beside `name` (removeStaleTempFilesIn recognises it). */
export function tempName(name: string): string {
  // A v4 UUID's first 12 hex digits are random; randomUUID draws from a cached pool, where randomBytes makes a
  // system call each time (~15 µs of every write's event-loop time).
  const id = randomUUID();
  return `.${name}.${id.slice(0, 8)}${id.slice(9, 13)}${TEMP_SUFFIX}`;
}

/** Writes all of `bytes` into a just-created temp file, then gives it its owner and mode (writeFileIn's steps). */
export function fillTempFile(fd: number, bytes: Buffer, options: WriteInOptions): void {
  let offset = 0;
  while (offset < bytes.length) offset += fs.writeSync(fd, bytes, offset, bytes.length - offset);
  setTempFileOwnerAndMode(fd, options);
}

/** Gives a filled temp file the owner and mode it is to have (fillTempFile's last step). */
export function setTempFileOwnerAndMode(fd: number, options: WriteInOptions): void {
  if (options.owner) fs.fchownSync(fd, options.owner.uid, options.owner.gid);
  // chmod, unlike the create mode, is not narrowed by the umask (and comes after chown, which clears set-id bits).
  if (options.mode !== undefined) fs.fchmodSync(fd, options.mode);
}

/** Removes a temp file an atomic write gave up on; one never created or already renamed is nothing to clean. */
export function discardTempFile(dirFd: number, temp: string): void {
  try {
    fs.unlinkSync(fdPath(dirFd, temp));
  } catch {
    // Never created, or already renamed: nothing to clean.
  }
}

/**
 * Writes `name` in a held directory atomically: a temp file created O_EXCL|O_NOFOLLOW in that directory,
 * fsynced, renamed over `name` in the same directory, and the directory fsynced. A reader (or a crash) sees
 * the old bytes or the new, never half; whatever `name` is now (even a symlink) is replaced, never followed.
 * Synchronous, like syncDirectory.
 */
export function writeFileIn(dirFd: number, name: string, bytes: Buffer, options: WriteInOptions = {}): void {
  replaceThroughTempFile(dirFd, name, (fd) => {
    fillTempFile(fd, bytes, options);
    fs.fsyncSync(fd);
  });
  syncDirectory(dirFd);
}

/**
 * Replaces `name` in a held directory through a temp file beside it (created O_EXCL|O_NOFOLLOW): `fill` writes
 * and syncs it, then it is closed and renamed over `name`. On any failure the temp file is removed and the error
 * rethrown. Synchronous; replaceThroughTempFileInPool is the same calls in the same order off the event loop.
 */
export function replaceThroughTempFile(dirFd: number, name: string, fill: (fd: number) => void): void {
  const temp = tempName(name);
  const fd = fs.openSync(fdPath(dirFd, temp), CREATE_FLAGS, 0o666);
  try {
    try {
      fill(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(fdPath(dirFd, temp), fdPath(dirFd, name));
  } catch (error) {
    discardTempFile(dirFd, temp);
    throw error;
  }
}

/**
 * replaceThroughTempFile with an asynchronous `fill` (the descriptor stays open until it settles) and the temp
 * file's create and its rename in the thread pool: both change the directory, which on ext4 waits for a journal
 * commit another thread's fsync started. Under 16 sessions of journaled edits the create was the event loop's
 * heaviest system call (issue 34: ~0.23 ms a create against ~0.01 ms for a plain open, 2.1 s of a 30 s soak), and
 * every read waited behind it.
 */
const openInPool = promisify(fs.open);

export async function replaceThroughTempFileInPool(
  dirFd: number,
  name: string,
  fill: (fd: number) => Promise<void>,
): Promise<void> {
  const temp = tempName(name);
  // A plain descriptor, not a FileHandle: it is closed by number, like the synchronous variant's.
  const fd = await openInPool(fdPath(dirFd, temp), CREATE_FLAGS, 0o666);
  try {
    try {
      await fill(fd);
    } finally {
      fs.closeSync(fd);
    }
    await fsp.rename(fdPath(dirFd, temp), fdPath(dirFd, name));
  } catch (error) {
    discardTempFile(dirFd, temp);
    throw error;
  }
}

/** Removes file `name` from a held directory if it is there (a symlink is removed, never followed); true when removed. */
export async function removeFileIn(dirFd: number, name: string): Promise<boolean> {
  try {
    await fsp.unlink(fdPath(dirFd, name));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return false;
    throw error;
  }
  syncDirectory(dirFd);
  return true;
}

/** Removes empty directory `name` from a held directory; false when gone or no longer empty. */
export async function removeEmptyDirectoryIn(dirFd: number, name: string): Promise<boolean> {
  try {
    await fsp.rmdir(fdPath(dirFd, name));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // Not empty means someone else put files there since; leaving it is the conservative choice.
    if (code === "ENOENT" || code === "ENOTEMPTY" || code === "EEXIST" || code === "ENOTDIR") return false;
    throw error;
  }
  syncDirectory(dirFd);
  return true;
}

/**
 * Creates the directories `names` below a held directory, one level at a time, each entered by descriptor
 * right after mkdir (a symlink put there meanwhile is refused with ENOTDIR, never followed). Returns the
 * deepest directory's O_PATH descriptor, which the caller closes unless it is `dirFd` itself.
 */
export async function makeDirectoriesIn(dirFd: number, names: string[], owner: Identity | undefined): Promise<number> {
  let current = dirFd;
  try {
    for (const name of names) {
      let created = true;
      try {
        fs.mkdirSync(fdPath(current, name));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
        created = false;
      }
      const next = openSubdirectory(current, name);
      if (next === undefined) {
        const error: NodeJS.ErrnoException = new Error(`ENOTDIR: ${name} is not a directory`);
        error.code = "ENOTDIR";
        throw error;
      }
      if (created) {
        if (owner) fs.chownSync(fdPath(next), owner.uid, owner.gid);
        syncDirectory(current);
      }
      if (current !== dirFd) closeQuietly(current);
      current = next;
    }
    return current;
  } catch (error) {
    if (current !== dirFd) closeQuietly(current);
    throw error;
  }
}

/** Removes temp files a killed process left next to `name` mid-write in a held directory; returns their names. */
export async function removeStaleTempFilesIn(dirFd: number, name: string): Promise<string[]> {
  const prefix = `.${name}.`;
  let names: string[];
  try {
    names = await fsp.readdir(fdPath(dirFd));
  } catch {
    return [];
  }
  const stale = names.filter(
    (n) =>
      n.startsWith(prefix) &&
      n.endsWith(TEMP_SUFFIX) &&
      /^[0-9a-f]{12}$/.test(n.slice(prefix.length, -TEMP_SUFFIX.length)),
  );
  for (const staleName of stale) await fsp.unlink(fdPath(dirFd, staleName)).catch(() => undefined);
  return stale;
}
