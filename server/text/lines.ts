// Lines over the lossy UTF-8 view of a file (decode.ts): where each line starts and ends, UTF-8-safe cuts,
// and character columns, all as byte offsets into that view.
import { newlineStyleOf } from "./detect.js";
import type { NewlineStyle } from "./types.js";

const LF = 0x0a;
const CR = 0x0d;

export interface LineIndex {
  /** UTF-8 offset where each line starts; a line runs to the next start (terminator included). */
  starts: number[];
  /** Total UTF-8 length; the end of the last line. */
  length: number;
  newline: NewlineStyle;
}

/**
 * Lines are numbered by \n, as ripgrep, git and wc do, so /g line numbers are /r line numbers; a \r before
 * the \n belongs to the terminator, and a lone \r (old Mac files) counts only for the newline style.
 * A final terminator does not open an extra empty line.
 */
export function indexLines(utf8: Buffer): LineIndex {
  const starts: number[] = utf8.length > 0 ? [0] : [];
  const n = utf8.length;
  let lf = 0;
  let crlf = 0;
  for (let i = utf8.indexOf(LF); i !== -1; i = utf8.indexOf(LF, i + 1)) {
    if (i > 0 && utf8[i - 1] === CR) crlf++;
    else lf++;
    if (i + 1 < n) starts.push(i + 1);
  }
  let cr = 0;
  for (let i = utf8.indexOf(CR); i !== -1; i = utf8.indexOf(CR, i + 1)) if (utf8[i + 1] !== LF) cr++;
  return { starts, length: n, newline: newlineStyleOf({ lf, crlf, cr }) };
}

/** End of line `i` (0-based) without its terminator. */
export function lineContentEnd(utf8: Buffer, index: LineIndex, i: number): number {
  let end = i + 1 < index.starts.length ? index.starts[i + 1]! : index.length;
  if (end > index.starts[i]! && utf8[end - 1] === LF) {
    end--;
    if (end > index.starts[i]! && utf8[end - 1] === CR) end--;
  }
  return end;
}

/** Largest offset <= limit that does not split a UTF-8 sequence, never below `start`. */
export function utf8BoundaryAtOrBefore(utf8: Buffer, start: number, limit: number): number {
  let p = Math.min(limit, utf8.length);
  while (p > start && (utf8[p]! & 0xc0) === 0x80) p--;
  return p;
}

/** UTF-8 offset of the 1-based character (code point) column `col` within a line starting at `lineStart`. */
export function offsetOfColumn(utf8: Buffer, lineStart: number, lineEnd: number, col: number): number | undefined {
  let p = lineStart;
  for (let c = 1; c < col; c++) {
    if (p >= lineEnd) return undefined;
    p++;
    while (p < lineEnd && (utf8[p]! & 0xc0) === 0x80) p++;
  }
  return p;
}

/** 1-based character column of a UTF-8 offset within a line. */
export function columnOfOffset(utf8: Buffer, lineStart: number, offset: number): number {
  return countCodePoints(utf8.subarray(lineStart, offset)) + 1;
}

/** Code points in UTF-8 bytes (lead bytes counted). */
export function countCodePoints(bytes: Buffer): number {
  let count = 0;
  for (const b of bytes) if ((b & 0xc0) !== 0x80) count++;
  return count;
}
