// The portable /g engine: the ignore-aware walk plus JavaScript matching, written to give exactly what
// ripgrep gives (same files, order, binary and encoding rules, line text) where rg is not installed.
// Literal needles are matched here; regexes on the worker thread, so none can stall the event loop.
import fs from "node:fs";
import { MatchCollector, presentLine, type GrepLine } from "./grep-collect.js";
import type { GrepSearch } from "./grep-search.js";
import { readFileInDirectory, readHeldFile } from "../../sandbox/fd-ops.js";
import { MAX_SEARCH_FILE_BYTES } from "../limits.js";
import { findMatchingLines, type RegexWorker } from "./regex-worker.js";
import { decodeLossy, ripgrepSearches } from "../../text/index.js";
import { toRelative, walkTree } from "./walk.js";

/** Text sent to the regex worker in one message (files are never split). */
const BATCH_BYTES = 1024 * 1024;
const BATCH_FILES = 256;

interface PendingFile {
  relative: string;
  text: string;
}

/** Text of file bytes as both engines search them; undefined for binary files and for text rg takes for binary (UTF-32, BOM-less UTF-16). */
function searchText(bytes: Buffer | undefined): string | undefined {
  if (bytes === undefined) return undefined;
  const file = decodeLossy(bytes);
  return file.kind === "binary" || !ripgrepSearches(file.encoding) ? undefined : file.utf8.toString("utf8");
}

/** Text of entry `name` of a held directory; undefined for binary, oversized, unreadable or non-regular files. */
async function loadSearchText(dirFd: number, name: string): Promise<string | undefined> {
  try {
    return searchText(await readFileInDirectory(dirFd, name, MAX_SEARCH_FILE_BYTES));
  } catch {
    return undefined;
  }
}

/** Turns [line index, match offset] pairs into the lines /g shows. */
function present(text: string, hits: Array<[number, number]>): GrepLine[] {
  if (hits.length === 0) return [];
  const parts = text.split("\n");
  return hits.map(([index, at]) => {
    let line = parts[index]!;
    if (index < parts.length - 1 && line.endsWith("\r")) line = line.slice(0, -1);
    return presentLine(index + 1, line, at);
  });
}

/** Literal needles: a substring search per line, linear in the text. */
function matchLiteral(text: string, needle: string): Array<[number, number]> {
  if (!text.includes(needle)) return [];
  const out: Array<[number, number]> = [];
  const parts = text.split("\n");
  const count = text.endsWith("\n") ? parts.length - 1 : parts.length;
  for (let i = 0; i < count; i++) {
    let part = parts[i]!;
    if (i < parts.length - 1 && part.endsWith("\r")) part = part.slice(0, -1);
    const at = part.indexOf(needle);
    if (at !== -1) out.push([i, at]);
  }
  return out;
}

/**
 * Matches a batch of files in order and feeds the collector; false once the collector is full or the
 * deadline has passed (then marked on the collector).
 */
async function flush(batch: PendingFile[], search: GrepSearch, collector: MatchCollector, worker: RegexWorker): Promise<boolean> {
  if (batch.length === 0) return true;
  const { pattern } = search;
  let results: Array<Array<[number, number]>>;
  if (!pattern.regex) {
    // Escaped literals cannot backtrack, so they are safe on the main thread.
    results = batch.map((f) =>
      pattern.needle !== undefined ? matchLiteral(f.text, pattern.needle) : findMatchingLines(f.text, pattern.line.source, pattern.line.flags),
    );
  } else {
    const answer = await worker.match(pattern.line.source, pattern.line.flags, batch.map((f) => f.text), search.deadline, search.signal);
    if (answer === "timeout" || answer === "aborted") {
      collector.timeUp();
      return false;
    }
    results = answer;
  }
  for (const [i, file] of batch.entries()) {
    if (!collector.addFile(file.relative, present(file.text, results[i]!))) return false;
  }
  return true;
}

export async function searchWithFallback(search: GrepSearch, collector: MatchCollector, worker: RegexWorker): Promise<void> {
  const { root, target, include, deadline, signal } = search;
  if (search.targetKind === "file") {
    // The held file itself (grep.ts checked its size): no path is walked again.
    const info = fs.fstatSync(search.targetFd);
    const text = info.isFile() && info.size <= MAX_SEARCH_FILE_BYTES ? searchText(await readHeldFile(search.targetFd, info.size).catch(() => undefined)) : undefined;
    if (text !== undefined) await flush([{ relative: toRelative(root, target), text }], search, collector, worker);
    return;
  }
  let batch: PendingFile[] = [];
  let batchBytes = 0;
  const walk = walkTree({ root, rootFd: search.rootFd, start: target, startFd: search.targetFd, recursive: true, includeIgnored: search.includeIgnored, signal });
  for await (const entry of walk) {
    if (entry.kind !== "file") continue;
    if (include && !include.matches(toRelative(target, entry.absolute), entry.name)) continue;
    if (Date.now() > deadline) {
      collector.timeUp();
      return;
    }
    const text = await loadSearchText(entry.dirFd, entry.name);
    if (text === undefined) continue;
    batch.push({ relative: entry.relative, text });
    batchBytes += text.length;
    if (batchBytes >= BATCH_BYTES || batch.length >= BATCH_FILES) {
      if (!(await flush(batch, search, collector, worker))) return;
      batch = [];
      batchBytes = 0;
    }
  }
  await flush(batch, search, collector, worker);
}
