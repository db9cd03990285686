// The one detector: the byte order mark (UTF-8, UTF-16 LE/BE, UTF-32 LE/BE), BOM-less UTF-16 (sniffed),
// whether the content is binary, and the newline style. Both decoders and the line index stand on it, so reads
// and mutations agree.
import { ENCODING_FACTS } from "./encodings.js";
import { sniffUtf16 } from "./sniff-utf16.js";
import type { TextEncoding, Newline, NewlineCounts, NewlineStyle } from "./types.js";

export interface Detection {
  encoding: TextEncoding;
  /** Length of the byte order mark on disk: 0, 2, 3 or 4. */
  bomBytes: number;
  /**
   * The content holds a NUL code unit (U+0000) of its encoding. For UTF-8 and BOM-marked UTF-16 this is the
   * rule ripgrep applies while searching, so /r, /f and /g agree on which of those files are text; UTF-32 and
   * BOM-less UTF-16 text, which ripgrep takes for binary, is text here (see ripgrepSearches).
   */
  binary: boolean;
}

/** UTF-32 LE is tested before UTF-16 LE: its BOM starts with UTF-16 LE's. */
const BOMS: ReadonlyArray<{ encoding: TextEncoding; bytes: readonly number[] }> = [
  { encoding: "utf-32le", bytes: [0xff, 0xfe, 0x00, 0x00] },
  { encoding: "utf-32be", bytes: [0x00, 0x00, 0xfe, 0xff] },
  { encoding: "utf-8-bom", bytes: [0xef, 0xbb, 0xbf] },
  { encoding: "utf-16le", bytes: [0xff, 0xfe] },
  { encoding: "utf-16be", bytes: [0xfe, 0xff] },
];

/**
 * Classifies file bytes by their BOM. A file without one is UTF-8, unless it holds a zero byte (binary as
 * UTF-8) and sniff-utf16.ts finds it to be BOM-less UTF-16 text.
 */
export function detectEncoding(bytes: Buffer): Detection {
  const bom = bomOf(bytes);
  if (bom) {
    const bomBytes = bom.bytes.length;
    return {
      encoding: bom.encoding,
      bomBytes,
      binary: holdsNulUnit(bytes.subarray(bomBytes), ENCODING_FACTS[bom.encoding].unitBytes),
    };
  }
  if (bytes.indexOf(0) === -1) return { encoding: "utf-8", bomBytes: 0, binary: false };
  const utf16 = sniffUtf16(bytes);
  // The sniff weighs a sample; a NUL unit further on still makes the file binary, as with a BOM.
  if (utf16) return { encoding: utf16, bomBytes: 0, binary: holdsNulUnit(bytes, 2) };
  return { encoding: "utf-8", bomBytes: 0, binary: true };
}

/** The bytes a BOM can start with: a file that starts otherwise has none (most files). */
const BOM_LEADS = new Set(BOMS.map((b) => b.bytes[0]));

/** The first of BOMS that `bytes` starts with. Plain loops: this runs on every read, mostly before the code is hot. */
function bomOf(bytes: Buffer): (typeof BOMS)[number] | undefined {
  if (bytes.length === 0 || !BOM_LEADS.has(bytes[0]!)) return undefined;
  for (let b = 0; b < BOMS.length; b++) {
    const bom = BOMS[b]!;
    const mark = bom.bytes;
    if (bytes.length < mark.length) continue;
    let i = 0;
    while (i < mark.length && bytes[i] === mark[i]) i++;
    if (i === mark.length) return bom;
  }
  return undefined;
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
  // From newline to newline with indexOf, not character by character: every /e decodes its file with this, and
  // on a 100 MB file the loop over each character held the event loop ~0.9 s.
  let lf = text.indexOf("\n");
  let cr = text.indexOf("\r");
  while (lf !== -1 || cr !== -1) {
    if (cr !== -1 && (lf === -1 || cr < lf)) {
      if (cr + 1 === lf) {
        counts.crlf++;
        lf = text.indexOf("\n", lf + 1);
      } else counts.cr++;
      cr = text.indexOf("\r", cr + 1);
    } else {
      counts.lf++;
      lf = text.indexOf("\n", lf + 1);
    }
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
