// Reads whole files for the read tools. Small files are read synchronously: on Node 20 a promise-based
// readFile costs four thread-pool round trips (~250 µs here) for what a synchronous read does in ~5 µs.
import fs from "node:fs";

/** Files up to this size are read without leaving the event loop; larger ones go through the thread pool. */
export const SYNC_READ_MAX_BYTES = 256 * 1024;

/** The file's bytes; `knownSize` (from a stat just taken) picks the cheaper way to read them. */
export async function readWholeFile(absolute: string, knownSize: number): Promise<Buffer> {
  if (knownSize <= SYNC_READ_MAX_BYTES) return fs.readFileSync(absolute);
  return fs.promises.readFile(absolute);
}

// Non-blocking so that a FIFO cannot stall the event loop (it is refused after fstat); NOFOLLOW so that a
// final component swapped for a symlink after containment resolved it fails instead of being followed.
const OPEN_RESOLVED_FLAGS = fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | fs.constants.O_NOCTTY | (fs.constants.O_NOFOLLOW ?? 0);

export type OpenedTarget =
  | { kind: "open"; fd: number; info: fs.Stats }
  /** Gone, or replaced by a symlink, since containment resolved it. */
  | { kind: "changed" }
  /** Something open(2) refuses outright, such as a socket. */
  | { kind: "unopenable" };

/**
 * Opens a path containment has already resolved (symlinks followed, inside the root) and stats the open
 * file: one path walk instead of a stat by path and then an open by path. The caller closes `fd`.
 */
export function openResolved(absolute: string): OpenedTarget {
  let fd: number;
  try {
    fd = fs.openSync(absolute, OPEN_RESOLVED_FLAGS);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR" || code === "ELOOP") return { kind: "changed" };
    if (code === "ENXIO" || code === "EOPNOTSUPP") return { kind: "unopenable" };
    throw error;
  }
  try {
    return { kind: "open", fd, info: fs.fstatSync(fd) };
  } catch (error) {
    fs.closeSync(fd);
    throw error;
  }
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

/** stat without a thread-pool round trip (~5 µs instead of ~90 µs here); undefined when the path is gone. */
export function statNow(absolute: string): fs.Stats | undefined {
  return fs.statSync(absolute, { throwIfNoEntry: false });
}

/** lstat without a thread-pool round trip; undefined when the path is gone. */
export function lstatNow(absolute: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(absolute, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}
