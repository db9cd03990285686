// Cuts one page out of a text file: whole lines from a 1-based line (and column) up to a line count and a
// byte allowance, splitting a line only when that line alone exceeds the allowance (on a UTF-8 boundary).
import { ErrorCode, ToolError } from "../../errors.js";
import {
  indexLines,
  lineContentEnd,
  offsetOfColumn,
  columnOfOffset,
  utf8BoundaryAtOrBefore,
  type LineIndex,
} from "../../text/index.js";

export interface PageRequest {
  /** 1-based first line. */
  offset: number;
  /** 1-based character column where the first line starts (continuing a split line). */
  col: number;
  /** Number of lines wanted; undefined means to the end of the file. */
  limit: number | undefined;
  /** UTF-8 bytes of content this page may return. */
  allowance: number;
}

export interface PageCursor {
  line: number;
  col: number;
  /** Lines still wanted from `line` on, when the request had a limit. */
  limit: number | undefined;
}

export interface TextPage {
  content: string;
  /** The UTF-8 bytes content was decoded from (a view, not a copy). */
  bytes: Buffer;
  startLine: number;
  /** Character column the first line starts at (1 unless continuing a split line). */
  startCol: number;
  /** Last line returned, fully or in part; startLine - 1 when no line was returned (empty file). */
  endLine: number;
  totalLines: number;
  /** UTF-8 range [start, end) of the page. */
  start: number;
  end: number;
  /** The requested range was returned in full. */
  complete: boolean;
  /** Where the next page starts, when not complete. */
  resume: PageCursor | undefined;
  /** Set when a single line exceeded the allowance and was cut at a UTF-8 boundary. */
  splitLine: number | undefined;
}

/** UTF-8 bytes the requested range holds, before any allowance applies (what a fair share is sized on). */
export function measureRange(utf8: Buffer, index: LineIndex, request: Omit<PageRequest, "allowance">): number {
  const { start, rangeEnd } = locateRange(utf8, index, request);
  return rangeEnd - start;
}

function rangeError(hint: string, detail: Record<string, unknown>): ToolError {
  return new ToolError(ErrorCode.invalidLineRange, hint, { detail });
}

export function offsetPastEnd(offset: number, total: number): ToolError {
  return rangeError(
    `offset=${offset} is past the end: the file has ${total} lines. Use an offset from 1 to ${total}.`,
    {
      offset,
      totalLines: total,
    },
  );
}

export function colPastEnd(offset: number, col: number, length: number): ToolError {
  return rangeError(`col=${col} is past the end of line ${offset}, which has ${length} characters.`, {
    offset,
    col,
    lineLength: length,
  });
}

function locateRange(utf8: Buffer, index: LineIndex, request: Omit<PageRequest, "allowance">) {
  const total = index.starts.length;
  const { offset, col, limit } = request;
  if (total === 0) {
    if (offset !== 1 || col !== 1) {
      throw rangeError("The file is empty (0 lines); read it without offset or col.", { offset, col, totalLines: 0 });
    }
    return { start: 0, rangeEnd: 0, lastLine: 0, total };
  }
  if (offset > total) throw offsetPastEnd(offset, total);
  const lineStart = index.starts[offset - 1]!;
  const contentEnd = lineContentEnd(utf8, index, offset - 1);
  const start = col === 1 ? lineStart : offsetOfColumn(utf8, lineStart, contentEnd, col);
  if (start === undefined) throw colPastEnd(offset, col, columnOfOffset(utf8, lineStart, contentEnd) - 1);
  const lastLine = limit === undefined ? total : Math.min(total, offset + limit - 1);
  const rangeEnd = lastLine < total ? index.starts[lastLine]! : index.length;
  return { start, rangeEnd, lastLine, total };
}

/** Builds the page; throws invalid_line_range when offset or col lie outside the file. */
export function buildTextPage(utf8: Buffer, request: PageRequest, index: LineIndex = indexLines(utf8)): TextPage {
  const { start, rangeEnd, lastLine, total } = locateRange(utf8, index, request);
  const { offset, limit, allowance } = request;
  const lineEnd = (line: number) => (line < total ? index.starts[line]! : index.length);
  const page = (end: number, endLine: number, resume: PageCursor | undefined, splitLine?: number): TextPage => {
    const bytes = utf8.subarray(start, end);
    return {
      content: bytes.toString("utf8"),
      bytes,
      startLine: offset,
      startCol: request.col,
      endLine,
      totalLines: total,
      start,
      end,
      complete: resume === undefined,
      resume,
      splitLine,
    };
  };
  const remainingLimit = (line: number) => (limit === undefined ? undefined : limit - (line - offset));

  if (rangeEnd - start <= allowance) return page(rangeEnd, total === 0 ? 0 : lastLine, undefined);

  let end = start;
  let line = offset;
  while (line <= lastLine && lineEnd(line) - start <= allowance) {
    end = lineEnd(line);
    line++;
  }
  if (end > start) return page(end, line - 1, { line, col: 1, limit: remainingLimit(line) });

  // The first line alone is larger than the allowance: cut it, always making progress by one character.
  const whole = lineEnd(offset);
  let cut = utf8BoundaryAtOrBefore(utf8, start, start + allowance);
  if (cut === start) cut = nextCharacterEnd(utf8, start, whole);
  const contentEnd = lineContentEnd(utf8, index, offset - 1);
  // Never leave the next page inside the line terminator: a cut there takes the rest of the line.
  if (cut > contentEnd) cut = whole;
  if (cut >= whole)
    return page(
      whole,
      offset,
      offset < lastLine ? { line: offset + 1, col: 1, limit: remainingLimit(offset + 1) } : undefined,
    );
  const lineStart = index.starts[offset - 1]!;
  return page(
    cut,
    offset,
    { line: offset, col: columnOfOffset(utf8, lineStart, cut), limit: remainingLimit(offset) },
    offset,
  );
}

/** Offset just after the character that starts at `start`. */
export function nextCharacterEnd(utf8: Buffer, start: number, limit: number): number {
  let p = start + 1;
  while (p < limit && (utf8[p]! & 0xc0) === 0x80) p++;
  return p;
}
