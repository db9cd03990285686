// The bounded listing /r returns for a directory: name, kind and size of each entry, in name order,
// paged by entry number like lines of a file. Symlinks are reported, never followed.
import { z } from "zod";
import { ErrorCode, ToolError } from "../../errors.js";
import { listDirectorySync, lstatInDirectory } from "../../sandbox/fd-ops.js";
import { MAX_DIRECTORY_ENTRIES } from "../limits.js";
import { compareNames } from "../search/walk.js";

/** One listed entry, as /r answers it (part of the read tool's output schema, server/kernel/read/read-output.ts). */
export const directoryEntry = z.strictObject({
  name: z.string().describe("Entry name inside the directory."),
  kind: z
    .enum(["file", "dir", "symlink", "other"])
    .describe(
      "What the entry itself is; a symlink is not followed (other: a socket, device or FIFO, or gone meanwhile).",
    ),
  size: z.number().int().min(0).optional().describe("Bytes, for files only."),
});

export type DirectoryEntry = z.infer<typeof directoryEntry>;
export type EntryKind = DirectoryEntry["kind"];

export interface DirectoryPage {
  entries: DirectoryEntry[];
  totalEntries: number;
  /** 1-based number of the first and last entry returned (last < first when none). */
  startEntry: number;
  endEntry: number;
  complete: boolean;
  /** Entry number the next page starts at, when not complete. */
  resume: { entry: number; limit: number | undefined } | undefined;
}

/** JSON bytes one entry costs in a response, for budgeting. */
export function entryCost(entry: DirectoryEntry): number {
  return Buffer.byteLength(entry.name, "utf8") + (entry.size === undefined ? 24 : 36);
}

export interface DirectoryListing {
  names: string[];
  /** Bytes the listing would take from `offset` on, for fair sharing. */
  demand(offset: number, limit: number | undefined): number;
  page(offset: number, limit: number | undefined, allowance: number): DirectoryPage;
}

function describe(dirFd: number, name: string): DirectoryEntry {
  const info = lstatInDirectory(dirFd, name);
  // A name removed between readdir and lstat is still worth showing.
  if (!info) return { name, kind: "other" };
  if (info.isSymbolicLink()) return { name, kind: "symlink" };
  if (info.isDirectory()) return { name, kind: "dir" };
  if (info.isFile()) return { name, kind: "file", size: info.size };
  return { name, kind: "other" };
}

/**
 * Lists a held directory (an O_PATH descriptor from the containment walk) and describes, while it is held, the
 * entries `range` can show; page() later needs no descriptor. Synchronous like the rest of /r: sorting the
 * names costs more than reading them, and it runs here anyway.
 */
export function openDirectoryListing(
  dirFd: number,
  range: { offset: number; limit: number | undefined },
): DirectoryListing {
  const names = listDirectorySync(dirFd).sort(compareNames);
  const total = names.length;
  const window = (offset: number, limit: number | undefined) => {
    if (offset > Math.max(total, 1)) {
      throw new ToolError(
        ErrorCode.invalidLineRange,
        `offset=${offset} is past the end: the directory has ${total} entries. Use an offset from 1 to ${Math.max(total, 1)}.`,
        {
          detail: { offset, totalEntries: total },
        },
      );
    }
    const last = Math.min(total, offset - 1 + Math.min(limit ?? MAX_DIRECTORY_ENTRIES, MAX_DIRECTORY_ENTRIES));
    return { first: offset, last };
  };
  const described = new Map<number, DirectoryEntry>();
  const { first: shownFirst, last: shownLast } = window(range.offset, range.limit);
  for (let i = shownFirst - 1; i < shownLast; i++) described.set(i, describe(dirFd, names[i]!));
  return {
    names,
    demand(offset, limit) {
      const { first, last } = window(offset, limit);
      let bytes = 0;
      for (let i = first - 1; i < last; i++) bytes += Buffer.byteLength(names[i]!, "utf8") + 36;
      return bytes;
    },
    page(offset, limit, allowance) {
      const { first, last } = window(offset, limit);
      const entries: DirectoryEntry[] = [];
      for (let i = first - 1; i < last; i++) entries.push(described.get(i) ?? { name: names[i]!, kind: "other" });
      let used = 0;
      let count = 0;
      for (const entry of entries) {
        const cost = entryCost(entry);
        if (used + cost > allowance && count > 0) break;
        used += cost;
        count++;
      }
      const shown = entries.slice(0, count);
      const endEntry = first + count - 1;
      const wantedLast = limit === undefined ? total : Math.min(total, offset + limit - 1);
      const complete = endEntry >= wantedLast;
      return {
        entries: shown,
        totalEntries: total,
        startEntry: first,
        endEntry,
        complete,
        resume: complete ? undefined : { entry: endEntry + 1, limit: limit === undefined ? undefined : limit - count },
      };
    },
  };
}
