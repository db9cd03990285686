// The folder browser behind "add project": directories only, never outside the configured browse roots.
import fs from "node:fs/promises";
import path from "node:path";
import type { Identity } from "../sandbox/identity.js";
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

/** One folder name: no separator, no NUL or control character, not . or .., at most 255 bytes. */
const FOLDER_NAME = /^(?!\.{1,2}$)[^/\u0000-\u001f\u007f]{1,255}$/;

export interface CreateFolderOptions {
  /** Who agents' writes and commands run as in a folder (the bridge's terminalIdentity): the new folder's owner. */
  ownerFor?: (folder: string) => Identity | undefined;
}

/**
 * "New folder" in the folder browser (issue 32): one directory inside a folder under the browse roots, owned by the
 * agents' identity (uid 1000 in the appliance) when the bridge may give it away, so that a project on it can be
 * granted write and terminal without a host shell for mkdir and chown. Returns the parent's new listing.
 */
export async function createFolder(
  browseRoots: string[],
  parent: string,
  name: string,
  options: CreateFolderOptions,
): Promise<FolderListing & { created: string }> {
  if (!FOLDER_NAME.test(name) || Buffer.byteLength(name) > 255)
    throw new ControlError(
      ControlErrorCode.invalidPath,
      `"${name}" is not a folder name: give one name, without "/" or control characters, not "." or "..".`,
    );
  const listing = await listFolders(browseRoots, parent);
  const target = path.join(listing.path!, name);
  try {
    await fs.mkdir(target, { mode: 0o755 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST")
      throw new ControlError(
        ControlErrorCode.folderExists,
        `"${target}" already exists; open it or pick another name.`,
      );
    throw new ControlError(ControlErrorCode.notReadable, `cannot create "${target}": ${(error as Error).message}.`);
  }
  const owner = options.ownerFor?.(listing.path!);
  if (owner && process.getuid?.() === 0) await fs.chown(target, owner.uid, owner.gid);
  return { ...(await listFolders(browseRoots, listing.path!)), created: target };
}
