// Reads files for the read tools through descriptors a containment walk holds (server/sandbox/fd-walk.ts).
// Small files are read synchronously: on Node 20 a promise-based read costs four thread-pool round trips
// (~250 µs here) for what a synchronous read does in ~5 µs.
import fs from "node:fs";
import { openInDirectory } from "../../sandbox/fd-ops.js";

export { readHeldFile, readHeldFileSync, readOpenFile, SYNC_READ_MAX_BYTES } from "../../sandbox/fd-ops.js";

export type OpenedEntry =
  | { kind: "open"; fd: number; info: fs.Stats }
  /** Gone, replaced by a symlink (never followed), or under something that is not a directory. */
  | { kind: "changed" }
  /** Something open(2) refuses outright, such as a socket. */
  | { kind: "unopenable" };

/**
 * Opens entry `name` of a held directory for reading (non-blocking, so a FIFO cannot stall the event loop;
 * NOFOLLOW, so a symlink swapped in is refused) and fstats it. The caller closes `fd`.
 */
export function openEntry(dirFd: number, name: string): OpenedEntry {
  try {
    const opened = openInDirectory(dirFd, name, { throwOnError: true });
    return opened ? { kind: "open", ...opened } : { kind: "changed" };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR" || code === "ELOOP") return { kind: "changed" };
    if (code === "ENXIO" || code === "EOPNOTSUPP") return { kind: "unopenable" };
    throw error;
  }
}
