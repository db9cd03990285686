// One page of a large UTF-8 file cut from its byte range: the line index (large-file-index.ts) says where the
// requested lines lie, only the bytes a page of up to `max` can return are read, and buildTextPage cuts them
// as it cuts a whole file, so a ranged page and a whole-file page of the same lines are the same page.
import fs from "node:fs";
import {
  columnOfOffset,
  lineContentEnd,
  offsetOfColumn,
  utf8BoundaryAtOrBefore,
  type LineIndex,
} from "../../text/index.js";
import type { LargeFileFacts } from "./large-file-index.js";
import {
  buildTextPage,
  colPastEnd,
  nextCharacterEnd,
  offsetPastEnd,
  type PageCursor,
  type TextPage,
} from "./read-page.js";
import type { RangeRequest } from "./read-target.js";

/** Bytes a UTF-8 character takes at most: col-1 characters lie within 4*(col-1) bytes of their line's start. */
const MAX_CHAR_BYTES = 4;

/** The bytes read for a page: [start, end) of the file less its BOM, from the first requested line on. */
export interface PageWindow {
  bytes: Buffer;
  /** Offset of bytes[0]: the start of line `offset`. */
  start: number;
  /** Last whole line the window holds, or undefined when it holds only part of line `offset` (a very long line). */
  lastLine: number | undefined;
  /** End of the requested range (the end of its last line). */
  rangeEnd: number;
}

function lineEndOf(index: LineIndex, line: number): number {
  return line < index.starts.length ? index.starts[line]! : index.length;
}

/** Last line in [from, to] whose end is at or before `limit` (from when none is). */
function lastLineEndingBy(index: LineIndex, from: number, to: number, limit: number): number {
  let lo = from;
  let hi = to;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (lineEndOf(index, mid) <= limit) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

function readRange(fd: number, position: number, length: number): Buffer {
  const buffer = Buffer.allocUnsafe(length);
  let filled = 0;
  while (filled < length) {
    const n = fs.readSync(fd, buffer, filled, length - filled, position + filled);
    if (n === 0) break;
    filled += n;
  }
  return buffer.subarray(0, filled);
}

/** UTF-8 bytes the requested range holds (what a fair share of a multi-read is sized on). */
export function rangedDemand(facts: LargeFileFacts, range: RangeRequest): number {
  const { index } = facts;
  const total = index.starts.length;
  if (range.offset > total) throw offsetPastEnd(range.offset, total);
  const last = range.limit === undefined ? total : Math.min(total, range.offset + range.limit - 1);
  return lineEndOf(index, last) - index.starts[range.offset - 1]!;
}

/**
 * Reads the bytes any page of up to `max` bytes starting at the requested line and column can return: whole
 * lines up to that reach, or, when the first line alone runs far past it, that line's first part.
 */
export function readPageWindow(fd: number, facts: LargeFileFacts, range: RangeRequest, max: number): PageWindow {
  const { index } = facts;
  const total = index.starts.length;
  const { offset, col, limit } = range;
  if (offset > total) throw offsetPastEnd(offset, total);
  const start = index.starts[offset - 1]!;
  const last = limit === undefined ? total : Math.min(total, offset + limit - 1);
  const rangeEnd = lineEndOf(index, last);
  const reach = start + MAX_CHAR_BYTES * (col - 1) + max;
  const firstEnd = lineEndOf(index, offset);
  if (firstEnd > reach + 2 * MAX_CHAR_BYTES) {
    const bytes = readRange(fd, facts.bomBytes + start, reach + MAX_CHAR_BYTES - start);
    return { bytes, start, lastLine: undefined, rangeEnd };
  }
  const lastLine = lastLineEndingBy(index, offset, last, Math.max(reach, firstEnd));
  const end = lineEndOf(index, lastLine);
  return { bytes: readRange(fd, facts.bomBytes + start, end - start), start, lastLine, rangeEnd };
}

function cursor(line: number, col: number, offset: number, limit: number | undefined): PageCursor {
  return { line, col, limit: limit === undefined ? undefined : limit - (line - offset) };
}

/** The page of up to `allowance` bytes (at most the window's `max`) the window holds, in the file's line numbers. */
export function buildRangedPage(
  facts: LargeFileFacts,
  window: PageWindow,
  range: RangeRequest,
  allowance: number,
): TextPage {
  const { offset, col, limit } = range;
  const total = facts.index.starts.length;
  const { bytes, start: base } = window;
  if (window.lastLine === undefined) {
    // Part of one very long line: the page is a cut of it (this line alone exceeds any allowance).
    const start = col === 1 ? 0 : offsetOfColumn(bytes, 0, bytes.length, col)!;
    let cut = utf8BoundaryAtOrBefore(bytes, start, start + allowance);
    if (cut === start) cut = nextCharacterEnd(bytes, start, bytes.length);
    const part = bytes.subarray(start, cut);
    return {
      content: part.toString("utf8"),
      bytes: part,
      startLine: offset,
      startCol: col,
      endLine: offset,
      totalLines: total,
      start: base + start,
      end: base + cut,
      complete: false,
      resume: cursor(offset, columnOfOffset(bytes, 0, cut), offset, limit),
      splitLine: offset,
    };
  }
  const lines = window.lastLine - offset + 1;
  const index: LineIndex = {
    starts: facts.index.starts.slice(offset - 1, window.lastLine).map((s) => s - base),
    length: bytes.length,
    newline: facts.index.newline,
  };
  if (col !== 1 && offsetOfColumn(bytes, 0, lineContentEnd(bytes, index, 0), col) === undefined)
    throw colPastEnd(offset, col, columnOfOffset(bytes, 0, lineContentEnd(bytes, index, 0)) - 1);
  const page = buildTextPage(bytes, { offset: 1, col, limit: lines, allowance }, index);
  const shift = offset - 1;
  const resume = page.resume
    ? cursor(page.resume.line + shift, page.resume.col, offset, limit)
    : base + bytes.length < window.rangeEnd
      ? cursor(window.lastLine + 1, 1, offset, limit)
      : undefined;
  return {
    ...page,
    startLine: offset,
    endLine: page.endLine + shift,
    totalLines: total,
    start: page.start + base,
    end: page.end + base,
    complete: resume === undefined,
    resume,
    splitLine: page.splitLine === undefined ? undefined : page.splitLine + shift,
  };
}
