// Preimages: what a path looked like before a mutation (bytes + mode, or absent), captured before the first
// write and restored byte-exactly on rollback, whether the commit failed in-process or the process died.
import fs from "node:fs/promises";
import path from "node:path";
import type { Preimage } from "../store/journal.js";
import { missingDirectories, removeFileDurably, removeStaleTempFiles, writeFileAtomic } from "./atomic-write.js";

export async function capturePreimage(absolute: string): Promise<Preimage> {
  let info;
  try {
    info = await fs.lstat(absolute);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { path: absolute, kind: "absent" };
    throw error;
  }
  if (!info.isFile()) throw new Error(`preimage of a non-file: ${absolute}`);
  return { path: absolute, kind: "file", mode: info.mode & 0o7777, content: await fs.readFile(absolute) };
}

/** Records the directories a write under `dir` will create, so rollback can remove them again. */
export async function captureMissingDirectories(root: string, dir: string): Promise<Preimage[]> {
  return (await missingDirectories(root, dir)).map((d) => ({ path: d, kind: "absent_dir" as const }));
}

export interface RollbackReport {
  restored: string[];
  removed: string[];
}

/** Restores files first, then removes directories the mutation created (deepest first, only when empty). */
export async function rollbackPreimages(preimages: Preimage[]): Promise<RollbackReport> {
  const report: RollbackReport = { restored: [], removed: [] };
  for (const p of preimages) {
    if (p.kind !== "absent_dir") report.removed.push(...(await removeStaleTempFiles(p.path)));
    if (p.kind === "file") {
      if (await holds(p)) continue;
      await fs.mkdir(path.dirname(p.path), { recursive: true });
      await writeFileAtomic(p.path, p.content ?? Buffer.alloc(0), { mode: p.mode });
      report.restored.push(p.path);
    } else if (p.kind === "absent") {
      if (await removeFileDurably(p.path)) report.removed.push(p.path);
    }
  }
  const dirs = preimages.filter((p) => p.kind === "absent_dir").map((p) => p.path);
  for (const dir of dirs.sort((a, b) => b.length - a.length)) {
    try {
      await fs.rmdir(dir);
      report.removed.push(dir);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // Not empty means someone else put files there since; leaving it is the conservative choice.
      if (code !== "ENOENT" && code !== "ENOTEMPTY" && code !== "EEXIST") throw error;
    }
  }
  return report;
}

/** True when the file already has exactly the preimage's bytes and mode (rollback is idempotent). */
async function holds(p: Preimage): Promise<boolean> {
  try {
    const info = await fs.lstat(p.path);
    if (!info.isFile() || (info.mode & 0o7777) !== p.mode) return false;
    const current = await fs.readFile(p.path);
    return current.equals(p.content ?? Buffer.alloc(0));
  } catch {
    return false;
  }
}
