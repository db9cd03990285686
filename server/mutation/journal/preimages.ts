// Preimages: what a path looked like before a mutation (bytes + mode, or absent), captured before the first
// write and restored byte-exactly on rollback, whether the commit failed in-process or the process died.
// Paths are recorded in canonical form; rollback walks each again from the root by descriptor, refusing any
// symlink now on the way, so a restore can never land outside the project.
import { setTimeout as sleep } from "node:timers/promises";
import { ErrorCode, isToolError } from "../../errors.js";
import type { HeldPath } from "../../sandbox/fd-walk.js";
import { walkInsideRoot } from "../../sandbox/fd-walk.js";
import { readHeldFile, removeEmptyDirectoryIn, removeStaleTempFilesIn } from "../../sandbox/fd-ops.js";
import type { Identity } from "../../sandbox/identity.js";
import { isInside, toDisplayPath } from "../../sandbox/paths.js";
import type { Preimage } from "../../store/journal.js";
import { directoriesToCreate, removeHeldFile, writeHeldFile } from "../files/atomic-write.js";

/** The preimage of a held target: its bytes and mode, or that it is absent (plus any directories to create). */
export async function capturePreimages(target: HeldPath): Promise<Preimage[]> {
  if (!target.exists)
    return [
      ...directoriesToCreate(target).map((d) => ({ path: d, kind: "absent_dir" as const })),
      { path: target.absolute, kind: "absent" },
    ];
  const info = target.stats!;
  if (!info.isFile()) throw new Error(`preimage of a non-file: ${target.absolute}`);
  return [
    {
      path: target.absolute,
      kind: "file",
      mode: info.mode & 0o7777,
      content: await readHeldFile(target.fd!, info.size),
    },
  ];
}

export interface RollbackReport {
  restored: string[];
  removed: string[];
}

/**
 * How long a rollback keeps retrying a path whose folder is swapped for a symlink, before it gives up on a tree
 * that keeps changing under it. In time, not attempts: whoever swaps may be descheduled mid-swap for a while.
 */
const ROLLBACK_WALK_PATIENCE_MS = 2000;
const ROLLBACK_WALK_PAUSE_MS = 1;

/**
 * Walks a recorded canonical path again; a path recorded outside the root is refused outright. A symlink on
 * the way is path_changed, retried a few times: a folder swapped back and forth should not strand a rollback.
 */
async function hold(root: string, recorded: string): Promise<HeldPath> {
  if (!isInside(root, recorded)) throw new Error(`preimage path outside the project root: ${recorded}`);
  const deadline = Date.now() + ROLLBACK_WALK_PATIENCE_MS;
  for (;;) {
    try {
      return walkInsideRoot(root, toDisplayPath(root, recorded), { symlinks: "refuse" });
    } catch (error) {
      if (!isToolError(error) || error.code !== ErrorCode.pathChanged || Date.now() > deadline) throw error;
      await sleep(ROLLBACK_WALK_PAUSE_MS);
    }
  }
}

/** Restores files first, then removes directories the mutation created (deepest first, only when empty). */
export async function rollbackPreimages(
  root: string,
  preimages: Preimage[],
  agentFallback?: Identity,
): Promise<RollbackReport> {
  const report: RollbackReport = { restored: [], removed: [] };
  for (const p of preimages) {
    if (p.kind === "absent_dir") continue;
    const target = p.kind === "absent" ? await holdIfReachable(root, p.path) : await hold(root, p.path);
    if (!target) continue;
    try {
      if (target.pending.length <= 1) {
        const dir = target.parts.slice(0, -1);
        for (const name of await removeStaleTempFilesIn(target.dirFd, target.name))
          report.removed.push([root, ...dir, name].join("/"));
      }
      if (p.kind === "file") {
        if (await holds(target, p)) continue;
        await writeHeldFile(target, p.content ?? Buffer.alloc(0), {
          mode: p.mode!,
          ...(agentFallback ? { agentFallback } : {}),
        });
        report.restored.push(p.path);
      } else if (await removeHeldFile(target)) {
        report.removed.push(p.path);
      }
    } finally {
      target.close();
    }
  }
  const dirs = preimages.filter((p) => p.kind === "absent_dir").map((p) => p.path);
  for (const dir of dirs.sort((a, b) => b.length - a.length)) {
    const target = await holdIfReachable(root, dir);
    if (!target) continue;
    try {
      if (target.exists && target.stats?.isDirectory() && (await removeEmptyDirectoryIn(target.dirFd, target.name)))
        report.removed.push(dir);
    } finally {
      target.close();
    }
  }
  return report;
}

/**
 * A path recorded absent that cannot even be walked to now (a name longer than NAME_MAX, a file where a folder is
 * needed, a folder on the way gone) holds nothing, so there is nothing to remove: undefined. Such a path is how a
 * patch's impossible Add fails mid-commit, and its rollback must still restore every other path.
 */
async function holdIfReachable(root: string, recorded: string): Promise<HeldPath | undefined> {
  try {
    return await hold(root, recorded);
  } catch (error) {
    if (isUnreachable(error)) return undefined;
    throw error;
  }
}

function isUnreachable(error: unknown): boolean {
  if (isToolError(error)) return error.code === ErrorCode.invalidPath || error.code === ErrorCode.pathNotFound;
  const code = (error as NodeJS.ErrnoException).code;
  return code === "ENAMETOOLONG" || code === "ENOTDIR" || code === "ENOENT";
}

/**
 * What is on disk now, against the preimages: the recorded paths that do not hold their preimage (a file with other
 * bytes or mode, or something where nothing was). An empty list means the tree is exactly as before. Directories
 * the mutation created count only while a directory is still there.
 */
export async function pathsNotRestored(root: string, preimages: Preimage[]): Promise<string[]> {
  const differ: string[] = [];
  for (const p of preimages) {
    let target: HeldPath | undefined;
    try {
      target = p.kind === "file" ? await hold(root, p.path) : await holdIfReachable(root, p.path);
    } catch {
      differ.push(p.path);
      continue;
    }
    if (!target) continue;
    try {
      // A folder recorded absent may have been a file in the way (the walk sees nothing below a file): only a folder
      // there now is one the mutation left behind.
      const left =
        p.kind === "file"
          ? !(await holds(target, p))
          : p.kind === "absent_dir"
            ? target.exists && target.stats!.isDirectory()
            : target.exists;
      if (left) differ.push(p.path);
    } finally {
      target.close();
    }
  }
  return differ;
}

/** True when the held file already has exactly the preimage's bytes and mode (rollback is idempotent). */
async function holds(target: HeldPath, p: Preimage): Promise<boolean> {
  const info = target.stats;
  if (!target.exists || !info?.isFile() || (info.mode & 0o7777) !== p.mode) return false;
  const current = await readHeldFile(target.fd!, info.size);
  return current.equals(p.content ?? Buffer.alloc(0));
}
