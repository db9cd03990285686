// The one detector: the byte order mark (UTF-8, UTF-16 LE/BE, UTF-32 LE/BE), whether the content is binary,
// and the newline style. Both decoders and the line index stand on it, so reads and mutations agree.
import type { DetectedEncoding, Newline, NewlineCounts, NewlineStyle } from "./types.js";

export interface Detection {
  encoding: DetectedEncoding;
  /** Length of the byte order mark on disk: 0, 2, 3 or 4. */
  bomBytes: number;
  /**
   * The content holds a NUL code unit (U+0000). This is the rule ripgrep applies while searching, so /r, /f and
   * /g agree on which files are text; a UTF-32 file always holds one (its BOM's zero bytes count as content to
   * every reader that does not know UTF-32).
   */
  binary: boolean;
}

/** UTF-32 LE is tested before UTF-16 LE: its BOM starts with UTF-16 LE's. */
const BOMS: ReadonlyArray<{ encoding: DetectedEncoding; bytes: readonly number[] }> = [
  { encoding: "utf-32le", bytes: [0xff, 0xfe, 0x00, 0x00] },
  { encoding: "utf-32be", bytes: [0x00, 0x00, 0xfe, 0xff] },
  { encoding: "utf-8-bom", bytes: [0xef, 0xbb, 0xbf] },
  { encoding: "utf-16le", bytes: [0xff, 0xfe] },
  { encoding: "utf-16be", bytes: [0xfe, 0xff] },
];

/** Bytes per code unit of each encoding, for the NUL test. */
const UNIT_BYTES: Record<DetectedEncoding, number> = { "utf-8": 1, "utf-8-bom": 1, "utf-16le": 2, "utf-16be": 2, "utf-32le": 4, "utf-32be": 4 };

/** Classifies file bytes by their BOM; a file without one is taken as UTF-8 (BOM-less UTF-16 is not guessed). */
export function detectEncoding(bytes: Buffer): Detection {
  const bom = BOMS.find((b) => bytes.length >= b.bytes.length && b.bytes.every((byte, i) => bytes[i] === byte));
  const encoding = bom?.encoding ?? "utf-8";
  const bomBytes = bom?.bytes.length ?? 0;
  if (encoding === "utf-32le" || encoding === "utf-32be") return { encoding, bomBytes, binary: true };
  return { encoding, bomBytes, binary: holdsNulUnit(bytes.subarray(bomBytes), UNIT_BYTES[encoding]) };
}

/** True when an aligned code unit of `width` bytes is all zero (a trailing partial unit never is one). */
function holdsNulUnit(body: Buffer, width: number): boolean {
  if (width === 1) return body.indexOf(0) !== -1;
  for (let i = 0; i + width <= body.length; i += width) {
    let zero = true;
    for (let k = 0; k < width && zero; k++) zero = body[i + k] === 0;
    if (zero) return true;
  }
  return false;
}

/** Counts CRLF, lone LF and lone CR in decoded text. */
export function countNewlines(text: string): NewlineCounts {
  const counts: NewlineCounts = { lf: 0, crlf: 0, cr: 0 };
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 13) {
      if (text.charCodeAt(i + 1) === 10) {
        counts.crlf++;
        i++;
      } else counts.cr++;
    } else if (c === 10) counts.lf++;
  }
  return counts;
}

/** One kind of newline names the style; two or more make it mixed; none, none. */
export function newlineStyleOf(counts: NewlineCounts): NewlineStyle {
  const kinds = (counts.lf > 0 ? 1 : 0) + (counts.crlf > 0 ? 1 : 0) + (counts.cr > 0 ? 1 : 0);
  if (kinds === 0) return "none";
  if (kinds > 1) return "mixed";
  return counts.lf > 0 ? "lf" : counts.crlf > 0 ? "crlf" : "cr";
}

/** The most frequent newline, used for lines written into the text; LF wins ties and texts without newlines. */
export function dominantNewline({ lf, crlf, cr }: NewlineCounts): Newline {
  return crlf > lf && crlf >= cr ? "\r\n" : cr > lf && cr > crlf ? "\r" : "\n";
}

/** The text's dominant newline and its style. */
export function detectNewlines(text: string): { newline: Newline; style: NewlineStyle } {
  const counts = countNewlines(text);
  return { newline: dominantNewline(counts), style: newlineStyleOf(counts) };
}
