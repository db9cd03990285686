// The portable /g engine's streaming matcher for files over 8 MiB [MAX_SEARCH_FILE_BYTES]: the file is read in
// pieces of whole lines and each piece matched like a small file, so no file is too large to search and memory
// stays at one piece. Binary content (a NUL) turns the file into a named one, as with a small file.
import fs from "node:fs";
import { TextDecoder } from "node:util";
import { MAX_MATCHING_LINE_BYTES, presentLine, type GrepLine, type MatchCollector } from "./grep-collect.js";
import type { GrepSearch } from "./grep-request.js";

/** Bytes read per piece; a piece ends at its last newline (the rest waits for the next). */
const PIECE_BYTES = 1024 * 1024;

/** Matching lines of a piece as [line index, match offset] pairs; undefined when the search ran out of time. */
export type PieceMatcher = (text: string) => Promise<Array<[number, number]> | undefined>;

/** Characters of an overlong line kept across a cut: more than the longest pattern (1024 characters) needs. */
const LONG_LINE_TAIL_CHARS = 4096;

export interface LargeFile {
  /** Open for reading; the caller closes it. */
  fd: number;
  size: number;
  relative: string;
}

function readAt(fd: number, buffer: Buffer, position: number): Promise<number> {
  return new Promise((resolve, reject) =>
    fs.read(fd, buffer, 0, buffer.length, position, (error, n) => (error ? reject(error) : resolve(n))),
  );
}

/** The decoder rg would use: UTF-16 by its BOM, else UTF-8 (a UTF-8 BOM dropped); invalid bytes become U+FFFD. */
function decoderFor(head: Buffer): TextDecoder {
  if (head[0] === 0xff && head[1] === 0xfe) return new TextDecoder("utf-16le");
  if (head[0] === 0xfe && head[1] === 0xff) return new TextDecoder("utf-16be");
  return new TextDecoder("utf-8");
}

/**
 * Searches one large file and feeds the collector: its lines when it is text, its name (skipped: binary) when
 * it holds a NUL and matches with NULs read as line ends, or its name (skipped: long_line) when one line is
 * longer than MAX_MATCHING_LINE_BYTES. False once the collector is full or the search is out of time.
 */
export async function searchLargeFile(
  file: LargeFile,
  search: GrepSearch,
  collector: MatchCollector,
  match: PieceMatcher,
): Promise<boolean> {
  const buffer = Buffer.allocUnsafe(PIECE_BYTES);
  // One line past the limit tells the collector that the limit cut this file.
  const maxLines = collector.limits.maxMatches;
  const lines: GrepLine[] = [];
  let decoder: TextDecoder | undefined;
  let carry = "";
  let position = 0;
  let lineBase = 0;
  let binary = false;
  let matched = false;
  /** The carry holds only the tail of a line longer than MAX_MATCHING_LINE_BYTES. */
  let inLongLine = false;
  for (;;) {
    if (Date.now() > search.deadline || search.signal.aborted) {
      collector.timeUp();
      return false;
    }
    const n = await readAt(file.fd, buffer, position);
    position += n;
    const bytes = buffer.subarray(0, n);
    decoder ??= decoderFor(bytes);
    const end = n === 0;
    let text = carry + decoder.decode(bytes, { stream: !end });
    if (!binary && text.includes("\0")) {
      // rg shows no line of a binary file: what was found so far only says the file matches.
      binary = true;
      matched ||= lines.length > 0;
      lines.length = 0;
    }
    if (binary) text = text.replaceAll("\0", "\n");
    const cut = end ? text.length : text.lastIndexOf("\n") + 1;
    const piece = text.slice(0, cut);
    carry = text.slice(cut);
    if (carry.length > MAX_MATCHING_LINE_BYTES) {
      // A line too long to hold: only whether it matches counts (then the file is named, as rg's engine does).
      const hits = await match(carry);
      if (hits === undefined) {
        collector.timeUp();
        return false;
      }
      if (hits.length > 0)
        return binary
          ? collector.addSkipped(file.relative, "binary")
          : collector.addSkipped(file.relative, "long_line");
      // Keep a tail, so that a match across the cut is still found with the rest of the line.
      carry = carry.slice(-LONG_LINE_TAIL_CHARS);
      inLongLine = true;
    }
    if (piece.length > 0 && !(binary && matched)) {
      const hits = await match(piece);
      if (hits === undefined) {
        collector.timeUp();
        return false;
      }
      // The first line of this piece ends a line that was too long to hold.
      if (inLongLine && !binary && hits.some(([index]) => index === 0))
        return collector.addSkipped(file.relative, "long_line");
      inLongLine = false;
      if (binary) matched ||= hits.length > 0;
      else if (lines.length <= maxLines) {
        const parts = piece.split("\n");
        for (const [index, at] of hits) {
          if (lines.length > maxLines) break;
          let line = parts[index]!;
          if (index < parts.length - 1 && line.endsWith("\r")) line = line.slice(0, -1);
          lines.push(presentLine(lineBase + index + 1, line, at));
        }
      }
      lineBase += piece.split("\n").length - 1;
    }
    // A binary file that matched is named now; reading the rest would change nothing.
    if (binary && matched) return collector.addSkipped(file.relative, "binary");
    if (end) break;
  }
  return binary ? true : collector.addFile(file.relative, lines);
}
