// The portable /g engine: the ignore-aware walk plus JavaScript matching, written to give exactly what
// ripgrep gives (same files, order, binary and encoding rules, line text) where rg is not installed.
// Literal needles are matched here; regexes on the worker thread, so none can stall the event loop.
// Files up to 8 MiB are read whole; larger ones are streamed in pieces of whole lines (grep-stream.ts).
import fs from "node:fs";
import { MatchCollector, presentLine, type GrepLine } from "./grep-collect.js";
import type { GrepSearch } from "./grep-request.js";
import { openInDirectory, readOpenFileAsync, reopenForReading } from "../../sandbox/fd-ops.js";
import { closeQuietly } from "../../sandbox/fd-walk.js";
import { MAX_SEARCH_FILE_BYTES } from "../limits.js";
import { searchLargeFile } from "./grep-stream.js";
import { escapeForJs } from "./regex-dialect.js";
import { findMatchingLines, type RegexWorker } from "./regex-worker.js";
import { decodeLossy, ripgrepSearches } from "../../text/index.js";
import { toRelative, walkTree } from "./walk.js";

/** Text sent to the regex worker in one message (files are never split). */
const BATCH_BYTES = 1024 * 1024;
const BATCH_FILES = 256;

interface PendingFile {
  relative: string;
  text: string;
  /** Binary content (or text rg takes for binary): only whether it matches counts, and it is named, not shown. */
  binary: boolean;
}

/** Text of file bytes as both engines search them: binary files (and text rg takes for binary: UTF-32, BOM-less UTF-16) with NULs read as line ends. */
export function searchText(bytes: Buffer): { text: string; binary: boolean } {
  const file = decodeLossy(bytes);
  if (file.kind === "text" && ripgrepSearches(file.encoding))
    return { text: file.utf8.toString("utf8"), binary: false };
  return { text: binaryText(bytes), binary: true };
}

/** What rg --binary searches in a binary file: the (BOM-decoded) text with each NUL read as a line end. */
export function binaryText(bytes: Buffer): string {
  const utf16 =
    bytes[0] === 0xff && bytes[1] === 0xfe ? "utf-16le" : bytes[0] === 0xfe && bytes[1] === 0xff ? "utf-16be" : "utf-8";
  return new TextDecoder(utf16).decode(bytes).replaceAll("\0", "\n");
}

type Loaded = PendingFile | { large: { fd: number; size: number } } | undefined;

/** Entry `name` of a held directory: its text when small, an open descriptor when large (the caller closes it). */
async function loadEntry(dirFd: number, name: string, relative: string): Promise<Loaded> {
  let opened: ReturnType<typeof openInDirectory>;
  try {
    opened = openInDirectory(dirFd, name);
  } catch {
    return undefined;
  }
  if (!opened) return undefined;
  if (opened.info.isFile() && opened.info.size > MAX_SEARCH_FILE_BYTES)
    return { large: { fd: opened.fd, size: opened.info.size } };
  try {
    if (!opened.info.isFile()) return undefined;
    return { relative, ...searchText(await readOpenFileAsync(opened.fd, opened.info.size)) };
  } catch {
    return undefined;
  } finally {
    closeQuietly(opened.fd);
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

/**
 * Literal needles: the same line-by-line search as patterns, on the needle escaped (a literal cannot backtrack,
 * so it runs here, not on the worker); the first match's offset is indexOf's.
 */
function matchLiteral(text: string, needle: string): Array<[number, number]> {
  return findMatchingLines(text, escapeForJs(needle), "");
}

/**
 * Matches a batch of files in order and feeds the collector; false once the collector is full or the
 * deadline has passed (then marked on the collector).
 */
async function flush(
  batch: PendingFile[],
  search: GrepSearch,
  collector: MatchCollector,
  worker: RegexWorker,
): Promise<boolean> {
  if (batch.length === 0) return true;
  const { pattern } = search;
  let results: Array<Array<[number, number]>>;
  if (!pattern.regex) {
    // Escaped literals cannot backtrack, so they are safe on the main thread.
    results = batch.map((f) =>
      pattern.needle !== undefined
        ? matchLiteral(f.text, pattern.needle)
        : findMatchingLines(f.text, pattern.line.source, pattern.line.flags),
    );
  } else {
    const answer = await worker.match(
      pattern.line.source,
      pattern.line.flags,
      batch.map((f) => f.text),
      search.deadline,
      search.signal,
    );
    if (answer === "timeout" || answer === "aborted") {
      collector.timeUp();
      return false;
    }
    results = answer;
  }
  for (const [i, file] of batch.entries()) {
    const hits = results[i]!;
    const more = file.binary
      ? hits.length === 0 || collector.addSkipped(file.relative, "binary")
      : collector.addFile(file.relative, present(file.text, hits));
    if (!more) return false;
  }
  return true;
}

/** Matches one text on the main thread (literal) or the worker (regex); undefined when time ran out. */
async function matchText(
  text: string,
  search: GrepSearch,
  worker: RegexWorker,
): Promise<Array<[number, number]> | undefined> {
  const { pattern } = search;
  if (!pattern.regex)
    return pattern.needle !== undefined
      ? matchLiteral(text, pattern.needle)
      : findMatchingLines(text, pattern.line.source, pattern.line.flags);
  const answer = await worker.match(pattern.line.source, pattern.line.flags, [text], search.deadline, search.signal);
  return answer === "timeout" || answer === "aborted" ? undefined : answer[0];
}

export async function searchWithFallback(
  search: GrepSearch,
  collector: MatchCollector,
  worker: RegexWorker,
): Promise<void> {
  const { root, target, include, deadline, signal } = search;
  if (search.targetKind === "file") {
    // The held file itself: no path is walked again.
    const info = fs.fstatSync(search.targetFd);
    if (!info.isFile()) return;
    const relative = toRelative(root, target);
    let fd: number;
    try {
      fd = reopenForReading(search.targetFd);
    } catch {
      return;
    }
    try {
      if (info.size > MAX_SEARCH_FILE_BYTES)
        await searchLargeFile({ fd, size: info.size, relative }, search, collector, (text) =>
          matchText(text, search, worker),
        );
      else
        await flush([{ relative, ...searchText(await readOpenFileAsync(fd, info.size)) }], search, collector, worker);
    } catch {
      // Unreadable: nothing to report, as rg reports nothing.
    } finally {
      closeQuietly(fd);
    }
    return;
  }
  let batch: PendingFile[] = [];
  let batchBytes = 0;
  const walk = walkTree({
    root,
    rootFd: search.rootFd,
    start: target,
    startFd: search.targetFd,
    recursive: true,
    includeIgnored: search.includeIgnored,
    signal,
  });
  for await (const entry of walk) {
    if (entry.kind !== "file") continue;
    if (include && !include.matches(toRelative(target, entry.absolute), entry.name)) continue;
    if (Date.now() > deadline) {
      collector.timeUp();
      return;
    }
    const loaded = await loadEntry(entry.dirFd, entry.name, entry.relative);
    if (loaded === undefined) continue;
    if ("large" in loaded) {
      // In path order: what is batched before it goes first.
      try {
        if (!(await flush(batch, search, collector, worker))) return;
        batch = [];
        batchBytes = 0;
        if (
          !(await searchLargeFile({ ...loaded.large, relative: entry.relative }, search, collector, (text) =>
            matchText(text, search, worker),
          ))
        )
          return;
      } finally {
        closeQuietly(loaded.large.fd);
      }
      continue;
    }
    batch.push(loaded);
    batchBytes += loaded.text.length;
    if (batchBytes >= BATCH_BYTES || batch.length >= BATCH_FILES) {
      if (!(await flush(batch, search, collector, worker))) return;
      batch = [];
      batchBytes = 0;
    }
  }
  await flush(batch, search, collector, worker);
}
