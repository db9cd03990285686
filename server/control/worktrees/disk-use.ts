// How much disk a worktree folder uses, measured off the event loop (fs.promises, one directory at a time) and
// bounded: past MAX_ENTRIES the walk stops and says the figure is a lower bound. The figures are cached per
// session and refreshed in the background, so a session list never waits for a walk.
import fs from "node:fs/promises";
import path from "node:path";

/** Entries one measurement visits at most (a worktree with a node_modules can hold hundreds of thousands). */
export const MAX_DISK_WALK_ENTRIES = 200_000;
/** How old a measurement may be before a view asks for a new one. */
export const DISK_USE_REFRESH_MS = 60_000;

export interface DiskUse {
  /** Bytes allocated to the files seen (st_blocks * 512; hard links counted once). */
  bytes: number;
  files: number;
  /** False when the walk stopped at MAX_DISK_WALK_ENTRIES: bytes is then a lower bound. */
  complete: boolean;
  measuredAt: number;
}

/** Walks `folder` without following symbolic links; a folder that vanishes mid-walk is skipped. */
export async function measureDiskUse(folder: string, maxEntries = MAX_DISK_WALK_ENTRIES): Promise<DiskUse> {
  let bytes = 0;
  let files = 0;
  let seen = 0;
  const inodes = new Set<string>();
  const queue = [folder];
  while (queue.length > 0) {
    const dir = queue.pop()!;
    let entries: import("node:fs").Dirent[];
    try {
      entries = await fs.readdir(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      if (++seen > maxEntries) return { bytes, files, complete: false, measuredAt: Date.now() };
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        queue.push(full);
        continue;
      }
      try {
        const stat = await fs.lstat(full);
        const key = `${stat.dev}:${stat.ino}`;
        if (stat.nlink > 1 && inodes.has(key)) continue;
        if (stat.nlink > 1) inodes.add(key);
        bytes += stat.blocks * 512;
        files += 1;
      } catch {
        // removed while walking
      }
    }
  }
  return { bytes, files, complete: true, measuredAt: Date.now() };
}

/** The cached figures per session; `get` answers the last one and starts a fresh walk when it is old or missing. */
export function createDiskUseCache(measure: (folder: string) => Promise<DiskUse> = measureDiskUse) {
  const cache = new Map<string, DiskUse>();
  const running = new Map<string, Promise<DiskUse>>();
  const refresh = (sessionId: string, folder: string, fresh = false): Promise<DiskUse> => {
    const current = running.get(sessionId);
    if (current && !fresh) return current;
    const walk = measure(folder)
      .then((use) => {
        cache.set(sessionId, use);
        return use;
      })
      .finally(() => {
        if (running.get(sessionId) === walk) running.delete(sessionId);
      });
    running.set(sessionId, walk);
    return walk;
  };
  return {
    get(sessionId: string, folder: string): DiskUse | undefined {
      const known = cache.get(sessionId);
      if (!known || Date.now() - known.measuredAt > DISK_USE_REFRESH_MS) void refresh(sessionId, folder);
      return known;
    },
    /** A fresh measurement, awaited (GET /api/sessions/:id/worktree), even while a background one runs. */
    measure: (sessionId: string, folder: string): Promise<DiskUse> => refresh(sessionId, folder, true),
    forget(sessionId: string): void {
      cache.delete(sessionId);
    },
  };
}

export type DiskUseCache = ReturnType<typeof createDiskUseCache>;
