// The walk a terminal checkpoint takes of a project: every regular file's (dev, ino, size, mtime, ctime, mode),
// through held directory descriptors that never follow a symlink out of the root, and, when the bridge is root,
// only what the agent's identity could read itself (server/sandbox/agent-access.ts), so a change set never shows
// bytes the agent could not have read with /r.
import path from "node:path";
import type { Stats } from "node:fs";
import { setImmediate as nextTurn } from "node:timers/promises";
import { grants } from "../../sandbox/agent-access.js";
import { closeQuietly, openRootFd } from "../../sandbox/fd-walk.js";
import {
  listDirectory,
  lstatInDirectory,
  openInDirectory,
  openSubdirectory,
  readOpenFileAsync,
  TEMP_SUFFIX,
} from "../../sandbox/fd-ops.js";
import type { Identity } from "../../sandbox/identity.js";

const READ = 4;
const LIST = READ | 1;

/**
 * Entries a scan lstats (synchronously, 13-38 µs each here at load 10) before it gives the event loop a turn.
 * Without it a folder's entries were all lstat'ed in one stretch: the soak's projects grow by a file per /w and each
 * /x scans twice, while every other session's read waited (issue 34). An lstat in the thread pool would cost the
 * loop more than the call itself, so the calls stay synchronous and the scan takes turns with other callers.
 */
export const SCAN_ENTRIES_PER_TURN = 64;

/** What tells a file unchanged without reading it: the same inode, size, modification and change times. */
export interface FileMeta {
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  /** Permission bits (& 0o7777). */
  mode: number;
}

export interface ScanLimits {
  /** More regular files than this: the scan stops and says so. */
  maxFiles: number;
  /** More bytes of regular files than this: the scan stops and says so. */
  maxBytes: number;
  /** When the bridge is root: the agent's identity, whose mode-bit access decides what is read. */
  reader?: Identity;
}

export interface ScanSummary {
  files: number;
  bytes: number;
  /** The limit the tree went past; the scan stopped there and its visits are incomplete. */
  over?: "files" | "bytes";
  /** Files and folders the agent could not read, left out. */
  unreadable: number;
}

/** Called per regular file while its folder is held; `read` gives its bytes (undefined if it went meanwhile). */
export type FileVisitor = (
  absolute: string,
  meta: FileMeta,
  read: () => Promise<Buffer | undefined>,
) => void | Promise<void>;

export function metaOf(info: Stats): FileMeta {
  return {
    dev: info.dev,
    ino: info.ino,
    size: info.size,
    mtimeMs: info.mtimeMs,
    ctimeMs: info.ctimeMs,
    mode: info.mode & 0o7777,
  };
}

export function sameMeta(a: FileMeta, b: FileMeta): boolean {
  return (
    a.dev === b.dev &&
    a.ino === b.ino &&
    a.size === b.size &&
    a.mtimeMs === b.mtimeMs &&
    a.ctimeMs === b.ctimeMs &&
    a.mode === b.mode
  );
}

/** Bytes of regular file `name` in a held folder, if it is still the inode scanned (never through a link). */
async function readScanned(dirFd: number, name: string, meta: FileMeta): Promise<Buffer | undefined> {
  const opened = openInDirectory(dirFd, name);
  if (!opened) return undefined;
  try {
    if (!opened.info.isFile() || opened.info.ino !== meta.ino) return undefined;
    return await readOpenFileAsync(opened.fd, opened.info.size);
  } finally {
    closeQuietly(opened.fd);
  }
}

/** Walks `root` (canonical) depth-first, visiting each regular file; stops past a limit. */
export async function scanTree(root: string, limits: ScanLimits, visit: FileVisitor): Promise<ScanSummary> {
  const summary: ScanSummary = { files: 0, bytes: 0, unreadable: 0 };
  const pending: Array<{ fd: number; absolute: string }> = [{ fd: openRootFd(root), absolute: root }];
  let sinceTurn = 0;
  try {
    while (pending.length > 0) {
      const dir = pending.pop()!;
      try {
        for (const entry of await listDirectory(dir.fd)) {
          if (entry.isSymbolicLink() || entry.name.endsWith(TEMP_SUFFIX)) continue;
          if (++sinceTurn >= SCAN_ENTRIES_PER_TURN) {
            sinceTurn = 0;
            await nextTurn();
          }
          const info = lstatInDirectory(dir.fd, entry.name);
          if (!info) continue;
          const absolute = path.join(dir.absolute, entry.name);
          if (info.isDirectory()) {
            if (limits.reader && !grants(limits.reader, info, LIST)) summary.unreadable++;
            else {
              const fd = openSubdirectory(dir.fd, entry.name);
              if (fd !== undefined) pending.push({ fd, absolute });
            }
            continue;
          }
          if (!info.isFile()) continue;
          if (limits.reader && !grants(limits.reader, info, READ)) {
            summary.unreadable++;
            continue;
          }
          summary.files++;
          summary.bytes += info.size;
          if (summary.files > limits.maxFiles) summary.over = "files";
          else if (summary.bytes > limits.maxBytes) summary.over = "bytes";
          if (summary.over) return summary;
          const meta = metaOf(info);
          await visit(absolute, meta, () => readScanned(dir.fd, entry.name, meta));
        }
      } finally {
        closeQuietly(dir.fd);
      }
    }
    return summary;
  } finally {
    for (const dir of pending) closeQuietly(dir.fd);
  }
}
