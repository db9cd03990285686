// The portable /g engine: the ignore-aware walk plus JavaScript matching, written to give exactly what
// ripgrep gives (same files, order, binary and encoding rules, line text) where rg is not installed.
import { readWholeFile, statNow } from "./file-read.js";
import { MatchCollector, presentLine, type GrepLine } from "./grep-collect.js";
import type { GrepSearch } from "./grep-search.js";
import { MAX_SEARCH_FILE_BYTES } from "./limits.js";
import type { SearchPattern } from "./search-pattern.js";
import { decodeFile } from "./text-file.js";
import { toRelative, walkTree } from "./walk.js";

/** Matching lines of one file's text, numbered from 1; terminators (\n, \r\n) are not part of a line. */
export function matchLines(text: string, pattern: SearchPattern): GrepLine[] {
  if (pattern.needle !== undefined ? !text.includes(pattern.needle) : !pattern.whole.test(text)) return [];
  const out: GrepLine[] = [];
  const parts = text.split("\n");
  // A final \n ends the last line; it does not open another one.
  const count = text.endsWith("\n") ? parts.length - 1 : parts.length;
  for (let i = 0; i < count; i++) {
    let line = parts[i]!;
    if (i < parts.length - 1 && line.endsWith("\r")) line = line.slice(0, -1);
    const at = pattern.needle !== undefined ? line.indexOf(pattern.needle) : line.search(pattern.line);
    if (at !== -1) out.push(presentLine(i + 1, line, at));
  }
  return out;
}

async function searchFile(absolute: string, pattern: SearchPattern): Promise<GrepLine[] | undefined> {
  let bytes: Buffer;
  try {
    const info = statNow(absolute);
    if (!info?.isFile() || info.size > MAX_SEARCH_FILE_BYTES) return undefined;
    bytes = await readWholeFile(absolute, info.size);
  } catch {
    return undefined;
  }
  const file = decodeFile(bytes);
  if (file.kind === "binary") return undefined;
  return matchLines(file.utf8.toString("utf8"), pattern);
}

export async function searchWithFallback(search: GrepSearch, collector: MatchCollector): Promise<void> {
  const { root, target, pattern, include, deadline, signal } = search;
  if (search.targetKind === "file") {
    const lines = await searchFile(target, pattern);
    if (lines) collector.addFile(toRelative(root, target), lines);
    return;
  }
  for await (const entry of walkTree({ root, start: target, recursive: true, includeIgnored: search.includeIgnored, signal })) {
    if (entry.kind !== "file") continue;
    if (include && !include.matches(toRelative(target, entry.absolute), entry.name)) continue;
    if (Date.now() > deadline) {
      collector.timeUp();
      return;
    }
    const lines = await searchFile(entry.absolute, pattern);
    if (lines && !collector.addFile(entry.relative, lines)) return;
  }
}
