// The folder browser behind "add project": directories only, never outside the configured browse roots.
import fs from "node:fs/promises";
import path from "node:path";
import { isInside } from "../sandbox/paths.js";
import { ControlError, ControlErrorCode } from "./errors.js";

export const MAX_BROWSE_ENTRIES = 500;

export interface FolderListing {
  path: string | null;
  parent: string | null;
  roots: string[];
  directories: Array<{ name: string; path: string }>;
  truncated: boolean;
}

async function realRoots(roots: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const r of roots) {
    try {
      out.push(await fs.realpath(r));
    } catch {
      // a configured root that does not exist is simply not offered
    }
  }
  return [...new Set(out)];
}

export async function listFolders(browseRoots: string[], requested: string | undefined): Promise<FolderListing> {
  const roots = await realRoots(browseRoots);
  if (requested === undefined) {
    return { path: null, parent: null, roots, directories: roots.map((r) => ({ name: r, path: r })), truncated: false };
  }
  if (!path.isAbsolute(requested)) throw new ControlError(ControlErrorCode.invalidPath, "path must be absolute.");
  let real: string;
  try {
    real = await fs.realpath(requested);
  } catch {
    throw new ControlError(ControlErrorCode.pathNotFound, `"${requested}" does not exist.`);
  }
  const root = roots.find((r) => isInside(r, real));
  if (!root)
    throw new ControlError(
      ControlErrorCode.outsideBrowseRoots,
      `"${requested}" is outside the browse roots (${roots.join(", ") || "none"}).`,
    );
  const entries = await fs.readdir(real, { withFileTypes: true }).catch(() => {
    throw new ControlError(ControlErrorCode.notReadable, `"${requested}" is not a readable directory.`);
  });
  const directories: Array<{ name: string; path: string }> = [];
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    const full = path.join(real, entry.name);
    const isDir =
      entry.isDirectory() ||
      (entry.isSymbolicLink() &&
        (await fs.stat(full).then(
          (s) => s.isDirectory(),
          () => false,
        )));
    if (isDir) directories.push({ name: entry.name, path: full });
  }
  return {
    path: real,
    parent: real === root ? null : path.dirname(real),
    roots,
    directories: directories.slice(0, MAX_BROWSE_ENTRIES),
    truncated: directories.length > MAX_BROWSE_ENTRIES,
  };
}
