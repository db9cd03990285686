// Tells text from binary, detects the encoding (UTF-8 with or without BOM, UTF-16 LE/BE with BOM) and the
// newline style, and indexes lines over a UTF-8 view while keeping exact byte offsets of the file on disk.
import { isUtf8 } from "node:buffer";

export type TextEncoding = "utf-8" | "utf-8-bom" | "utf-16le" | "utf-16be";
export type NewlineStyle = "lf" | "crlf" | "cr" | "mixed" | "none";

export interface TextFile {
  kind: "text";
  encoding: TextEncoding;
  /** Length of the byte order mark on disk (0, 2 or 3). */
  bomBytes: number;
  /** The content as UTF-8: the file's own bytes for UTF-8 files, transcoded for UTF-16. BOM excluded. */
  utf8: Buffer;
  /** True when a UTF-8 file holds byte sequences that are not UTF-8 (they decode to U+FFFD). */
  invalidUtf8: boolean;
}

export interface BinaryFile {
  kind: "binary";
}

const UTF8_BOM = [0xef, 0xbb, 0xbf];
const NUL = 0;
const LF = 0x0a;
const CR = 0x0d;

function startsWith(bytes: Buffer, prefix: number[]): boolean {
  return bytes.length >= prefix.length && prefix.every((b, i) => bytes[i] === b);
}

function decodeUtf16(bytes: Buffer, bigEndian: boolean): string {
  // TextDecoder handles a trailing odd byte and lone surrogates by substituting U+FFFD, like ripgrep does.
  return new TextDecoder(bigEndian ? "utf-16be" : "utf-16le").decode(bytes);
}

/**
 * Classifies file bytes. A NUL byte anywhere (after UTF-16 decoding) makes a file binary: this is the
 * rule ripgrep applies while searching, so /r, /f and /g agree on which files are text.
 */
export function decodeFile(bytes: Buffer): TextFile | BinaryFile {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return fromUtf16(bytes, false);
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return fromUtf16(bytes, true);
  const bom = startsWith(bytes, UTF8_BOM);
  const body = bom ? bytes.subarray(3) : bytes;
  if (body.indexOf(NUL) !== -1) return { kind: "binary" };
  return { kind: "text", encoding: bom ? "utf-8-bom" : "utf-8", bomBytes: bom ? 3 : 0, utf8: body, invalidUtf8: !isUtf8(body) };
}

function fromUtf16(bytes: Buffer, bigEndian: boolean): TextFile | BinaryFile {
  const text = decodeUtf16(bytes.subarray(2), bigEndian);
  if (text.includes("\u0000")) return { kind: "binary" };
  return { kind: "text", encoding: bigEndian ? "utf-16be" : "utf-16le", bomBytes: 2, utf8: Buffer.from(text, "utf8"), invalidUtf8: false };
}

/** Text of a UTF-8 slice; invalid sequences become U+FFFD. */
export function decodeUtf8(bytes: Buffer): string {
  return bytes.toString("utf8");
}

/**
 * Byte offset in the file on disk of a UTF-8 offset into `file.utf8`. The offset must sit on a code point
 * boundary (line starts and UTF-8-safe cuts always do).
 */
export function diskOffsetOf(file: TextFile, utf8Offset: number): number {
  if (file.encoding === "utf-8" || file.encoding === "utf-8-bom") return file.bomBytes + utf8Offset;
  return file.bomBytes + 2 * file.utf8.subarray(0, utf8Offset).toString("utf8").length;
}

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
  const kinds = (lf > 0 ? 1 : 0) + (crlf > 0 ? 1 : 0) + (cr > 0 ? 1 : 0);
  const newline: NewlineStyle = kinds === 0 ? "none" : kinds > 1 ? "mixed" : lf > 0 ? "lf" : crlf > 0 ? "crlf" : "cr";
  return { starts, length: n, newline };
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

function countCodePoints(bytes: Buffer): number {
  let count = 0;
  for (const b of bytes) if ((b & 0xc0) !== 0x80) count++;
  return count;
}
