// The ignore-aware tree walk behind /f and the portable /g engine: depth-first, entries of each directory
// in byte order of their names (ripgrep's --sort path order), symlinks reported but never followed.
import type { Dirent } from "node:fs";
import path from "node:path";
import { closeQuietly } from "../../sandbox/fd-walk.js";
import { listDirectory, openSubdirectory } from "../../sandbox/fd-ops.js";
import {
  ALWAYS_SKIPPED_DIRS,
  ancestorIgnoreLevels,
  GITIGNORE,
  isIgnored,
  loadIgnoreLevel,
  type IgnoreLevel,
} from "./gitignore.js";

export type WalkKind = "file" | "dir" | "symlink";

export interface WalkEntry {
  /** Host path (for names and relative paths only: open the entry through dirFd + name). */
  absolute: string;
  /** O_PATH descriptor of the directory holding the entry; valid until the walk moves on. */
  dirFd: number;
  /** Path relative to the project root, "/"-separated. */
  relative: string;
  name: string;
  kind: WalkKind;
  /** 1 for entries directly inside the start directory. */
  depth: number;
}

export interface WalkOptions {
  /** Canonical project root. */
  root: string;
  /** O_PATH descriptor of the root (for the .gitignore files above the start). */
  rootFd: number;
  /** Canonical directory to walk, inside the root. */
  start: string;
  /** O_PATH descriptor of that directory, held by the caller for the whole walk. */
  startFd: number;
  recursive: boolean;
  /** ignored=1: no .gitignore rules and no skipped directories. */
  includeIgnored: boolean;
  signal?: AbortSignal;
  /**
   * Resume cursor (a root-relative path, "/"-separated): only entries after it in walk order are yielded,
   * and directories wholly before it are not descended, so a continued walk makes progress (find's next).
   */
  after?: string;
}

type CursorPosition = "before" | "ancestor" | "self" | "after";

/** Where a root-relative path lies against the cursor in pre-order with names in byte order. */
function positionOf(relative: string, cursor: string[]): CursorPosition {
  const parts = relative.split("/");
  const n = Math.min(parts.length, cursor.length);
  for (let i = 0; i < n; i++) {
    const c = compareNames(parts[i]!, cursor[i]!);
    if (c !== 0) return c < 0 ? "before" : "after";
  }
  if (parts.length === cursor.length) return "self";
  // A directory on the way to the cursor comes before it; an entry inside the cursor comes after it.
  return parts.length < cursor.length ? "ancestor" : "after";
}

/** Compares names by Unicode code point, which is the byte order of their UTF-8 form. */
export function compareNames(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(i)!;
    if (x !== y) return x - y;
    if (x > 0xffff) i++;
  }
  return a.length - b.length;
}

export function toRelative(root: string, absolute: string): string {
  return path.relative(root, absolute).split(path.sep).join("/");
}

function kindOf(entry: Dirent): WalkKind | undefined {
  if (entry.isSymbolicLink()) return "symlink";
  if (entry.isDirectory()) return "dir";
  if (entry.isFile()) return "file";
  return undefined;
}

const SKIPPED = new Set<string>(ALWAYS_SKIPPED_DIRS);

async function readSorted(dirFd: number): Promise<Dirent[]> {
  try {
    const entries = await listDirectory(dirFd);
    return entries.sort((a, b) => compareNames(a.name, b.name));
  } catch {
    // Unreadable or vanished directory: skipped, as ripgrep does.
    return [];
  }
}

/**
 * Yields every entry under `start` that find and grep may consider, pre-order (a directory before its
 * contents). Stop early by breaking out of the loop. Descends by descriptor (each subdirectory opened
 * O_NOFOLLOW|O_DIRECTORY inside its parent's), so a directory swapped for a symlink is skipped, never followed.
 */
export async function* walkTree(options: WalkOptions): AsyncGenerator<WalkEntry> {
  const { root, start, recursive, includeIgnored, signal } = options;
  const startRel = toRelative(root, start);
  const baseLevels = includeIgnored ? [] : await ancestorIgnoreLevels(options.rootFd, startRel);

  const cursor = options.after === undefined ? undefined : options.after.split("/").filter((p) => p !== "");

  async function* visit(
    dirFd: number,
    dir: string,
    rel: string,
    depth: number,
    levels: IgnoreLevel[],
    pastCursor: boolean,
  ): AsyncGenerator<WalkEntry> {
    const entries = await readSorted(dirFd);
    let active = levels;
    if (!includeIgnored && entries.some((e) => e.name === GITIGNORE && e.isFile())) {
      const own = await loadIgnoreLevel(dirFd, rel);
      if (own) active = [...levels, own];
    }
    for (const dirent of entries) {
      if (signal?.aborted) return;
      const kind = kindOf(dirent);
      if (!kind) continue;
      const childRel = rel === "" ? dirent.name : `${rel}/${dirent.name}`;
      // A linked worktree's .git link file names metadata outside the project (fd-walk.ts gitLinkRefused).
      if (childRel === ".git" && kind === "file") continue;
      if (!includeIgnored) {
        if (kind === "dir" && SKIPPED.has(dirent.name)) continue;
        if (isIgnored(active, childRel, kind === "dir")) continue;
      }
      const position = pastCursor || !cursor ? "after" : positionOf(childRel, cursor);
      if (position === "before") continue;
      const absolute = path.join(dir, dirent.name);
      if (position === "after") yield { absolute, dirFd, relative: childRel, name: dirent.name, kind, depth };
      if (kind !== "dir" || !recursive) continue;
      const childFd = openSubdirectory(dirFd, dirent.name);
      // Gone or no longer a real directory since readdir: skipped, as a vanished directory is.
      if (childFd === undefined) continue;
      try {
        yield* visit(childFd, absolute, childRel, depth + 1, active, position === "after" || position === "self");
      } finally {
        closeQuietly(childFd);
      }
    }
  }

  yield* visit(options.startFd, start, startRel, 1, baseLevels, false);
}
