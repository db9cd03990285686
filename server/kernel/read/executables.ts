// Finds executables on PATH without running them: what /p reports and how /g decides whether rg is there.
// /p looks them up as the agent's commands would find them: their PATH and, when the bridge is root, their identity.
import fs from "node:fs/promises";
import type { Stats } from "node:fs";
import path from "node:path";
import type { Identity } from "../../sandbox/identity.js";

/**
 * Execute (search, for a folder) permission by the mode bits alone, as the kernel decides it for `who`: owner bits
 * when it owns the entry, else group bits for its group, else the rest. Exact for sandboxed commands, which run
 * with no supplementary groups (setgroups(0) in native/sandbox/child.c); ACLs are not read.
 */
function mayExecute(info: Stats, who: Identity): boolean {
  const bits = info.uid === who.uid ? 0o100 : info.gid === who.gid ? 0o010 : 0o001;
  return (info.mode & bits) !== 0;
}

/** Every folder from / down to `file`'s own, searchable by `who`. */
async function foldersSearchable(file: string, who: Identity): Promise<boolean> {
  for (let dir = path.dirname(file); ; dir = path.dirname(dir)) {
    if (!mayExecute(await fs.stat(dir), who)) return false;
    if (dir === path.dirname(dir)) return true;
  }
}

async function isExecutableFile(candidate: string, who: Identity | undefined): Promise<boolean> {
  try {
    const info = await fs.stat(candidate);
    if (!info.isFile()) return false;
    if (!who) {
      await fs.access(candidate, fs.constants.X_OK);
      return true;
    }
    // Root's access() says yes to any file with an x bit anywhere, behind folders only root may enter: check as
    // the agent, along the path as named and along the path its links lead to.
    const real = await fs.realpath(candidate);
    return mayExecute(info, who) && (await foldersSearchable(candidate, who)) && (await foldersSearchable(real, who));
  } catch {
    return false;
  }
}

export interface LocateOptions {
  /** The PATH to search; the bridge's own by default. */
  searchPath?: string | undefined;
  /** Look up as this identity (the agent's, when the bridge is root); the bridge's own access when absent. */
  identity?: Identity | undefined;
}

/** The first PATH entry holding an executable `name`, or undefined. */
export async function locateExecutable(name: string, options: LocateOptions = {}): Promise<string | undefined> {
  const searchPath = "searchPath" in options ? options.searchPath : process.env.PATH;
  for (const dir of (searchPath ?? "").split(path.delimiter)) {
    if (dir === "") continue;
    const candidate = path.join(dir, name);
    if (await isExecutableFile(candidate, options.identity)) return candidate;
  }
  return undefined;
}
