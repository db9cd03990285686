// The existing paths closest to one that does not exist (scaner.py -> scanner.py, scr/app.ts -> src/app.ts),
// found from the deepest directory the containment walk reached, through descriptors only: a path_not_found
// answer can then offer paths that are really there instead of a search that finds nothing.
import { closeQuietly } from "./proc-fd.js";
import { listDirectorySync, lstatInDirectory, openSubdirectory } from "./fd-ops.js";

const MAX_SCANNED_ENTRIES = 2000;
export const MAX_CLOSEST_PATHS = 3;

/** Edit distance counting a swap of two neighbours as one edit (scr -> src), small inputs only (names). */
function distance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

const stem = (name: string) => name.replace(/\.[^.]*$/, "");

/** How far `candidate` is from `wanted`, or undefined when it is not plausibly what was meant. */
function score(wanted: string, candidate: string): number | undefined {
  if (candidate.toLowerCase() === wanted.toLowerCase()) return 0;
  if (stem(candidate) === stem(wanted) && stem(wanted).length > 0) return 1; // another extension
  const d = distance(wanted.toLowerCase(), candidate.toLowerCase());
  return d <= Math.max(1, Math.floor(wanted.length / 4)) ? d + 1 : undefined;
}

/** Whether `rest` (names below dirFd, the last one any kind of entry) exists, opening directories only. */
function existsBelow(dirFd: number, rest: string[]): boolean {
  if (rest.length === 0) return true;
  if (rest.length === 1) return lstatInDirectory(dirFd, rest[0]!) !== undefined;
  const sub = openSubdirectory(dirFd, rest[0]!);
  if (sub === undefined) return false;
  try {
    return existsBelow(sub, rest.slice(1));
  } finally {
    closeQuietly(sub);
  }
}

/**
 * Up to MAX_CLOSEST_PATHS existing paths ("/project/..." form) that differ from the missing one in its first
 * missing component. `dirDisplay` is the display path of dirFd; `pending` the names below it that are missing.
 */
export function closestPaths(dirFd: number, dirDisplay: string, pending: readonly string[]): string[] {
  const [wanted, ...rest] = pending;
  if (wanted === undefined) return [];
  let names: string[];
  try {
    names = listDirectorySync(dirFd).slice(0, MAX_SCANNED_ENTRIES);
  } catch {
    return [];
  }
  const ranked = names
    .filter((name) => name.length <= 255)
    .map((name) => ({ name, score: score(wanted, name) }))
    .filter((c): c is { name: string; score: number } => c.score !== undefined && c.name !== wanted)
    .sort((a, b) => a.score - b.score || (a.name < b.name ? -1 : 1));
  const out: string[] = [];
  for (const { name } of ranked) {
    if (out.length >= MAX_CLOSEST_PATHS) break;
    const sub = rest.length === 0 ? undefined : openSubdirectory(dirFd, name);
    if (rest.length > 0 && sub === undefined) continue;
    try {
      if (sub !== undefined && !existsBelow(sub, rest)) continue;
    } finally {
      if (sub !== undefined) closeQuietly(sub);
    }
    out.push([dirDisplay.replace(/\/$/, ""), name, ...rest].join("/"));
  }
  return out;
}
