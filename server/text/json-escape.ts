// Escapes valid UTF-8 bytes as a JSON string, byte for byte what JSON.stringify writes for their decoded text,
// without building that text: four bytes are tested at a time for the few that need escaping (issue 34).

/** Bytes an escape adds per byte: 1 for \" \\ \b \t \n \f \r, 5 for \u00XX, 0 for a byte written as itself. */
const EXTRA = new Uint8Array(256);
/** The letter after the backslash of a two-byte escape. */
const SHORT = new Uint8Array(256);
for (let b = 0; b < 0x20; b++) EXTRA[b] = 5;
for (const [b, letter] of [
  [0x08, "b"],
  [0x09, "t"],
  [0x0a, "n"],
  [0x0c, "f"],
  [0x0d, "r"],
  [0x22, '"'],
  [0x5c, "\\"],
] as const) {
  EXTRA[b] = 1;
  SHORT[b] = letter.charCodeAt(0);
}
const HEX = Buffer.from("0123456789abcdef", "latin1");
const BACKSLASH = 0x5c;
const QUOTE = 0x22;

const ONES = 0x01010101;
const HIGHS = 0x80808080;

/**
 * Nonzero when some byte of the word is below 0x20 or is `"` or `\` (the exact test of "a byte below n", and of
 * "a zero byte" after XOR with the byte repeated; which bits are set is not exact, only whether any is).
 */
function needsEscape(x: number): number {
  const quote = x ^ 0x22222222;
  const backslash = x ^ 0x5c5c5c5c;
  return (((x - 0x20202020) & ~x) | ((quote - ONES) & ~quote) | ((backslash - ONES) & ~backslash)) & HIGHS;
}

/** A JSON string's bytes, planned: written by `write`, `size` bytes with its quotes. */
export interface JsonEscape {
  size: number;
  /** Writes the string at `at` in `out` (which has room for `size` bytes); returns the offset after it. */
  write(out: Buffer, at: number): number;
}

/**
 * Bytes per escape below which escaping copies the runs between escapes; text denser in escapes is left to
 * JSON.stringify, which escapes it faster than a copy per run. Measured on 128 KiB (issue 34): evenly spaced
 * escapes break even at one per 16 bytes; source code averages one per ~29 (its tabs, newlines and quotes), and
 * there the runs take about half JSON.stringify's time; a log of 80-byte lines about a third.
 */
const MIN_BYTES_PER_ESCAPE = 20;

/**
 * The JSON string (quotes included) of the text `utf8` decodes to, as UTF-8 bytes: the same bytes as
 * Buffer.from(JSON.stringify(utf8.toString("utf8"))) when `utf8` is valid UTF-8 (the caller checks that). Valid
 * UTF-8 encodes no lone surrogate, the only characters from U+0020 up that JSON.stringify escapes besides `"` and
 * `\`, so every byte from 0x80 up is written as itself. Undefined when the bytes scanned so far are denser in
 * escapes than one per `minBytesPerEscape` (0: never).
 */
export function planJsonEscape(utf8: Buffer, minBytesPerEscape = MIN_BYTES_PER_ESCAPE): JsonEscape | undefined {
  const positions: number[] = [];
  let extra = 0;
  const note = (i: number) => {
    const e = EXTRA[utf8[i]!]!;
    if (e !== 0) {
      positions.push(i);
      extra += e;
    }
  };
  const n = utf8.length;
  const head = Math.min(n, (4 - (utf8.byteOffset & 3)) & 3);
  let i = 0;
  for (; i < head; i++) note(i);
  const words = (n - i) >> 2;
  const view = new Uint32Array(utf8.buffer, utf8.byteOffset + i, words);
  for (let k = 0; k < words; k++) {
    if (needsEscape(view[k]!) === 0) continue;
    const at = i + 4 * k;
    // Denser so far than one escape per minBytesPerEscape bytes (with a little slack at the start): given up
    // early, since the whole scan would be wasted.
    if (positions.length > 16 + at / minBytesPerEscape) return undefined;
    note(at);
    note(at + 1);
    note(at + 2);
    note(at + 3);
  }
  for (i += 4 * words; i < n; i++) note(i);
  const size = n + extra + 2;
  return { size, write: (out, at) => writeEscaped(utf8, positions, size, out, at) };
}

function writeEscaped(utf8: Buffer, positions: readonly number[], size: number, out: Buffer, start: number): number {
  const n = utf8.length;
  const end = start + size;
  out[start] = QUOTE;
  // The bytes go to the end of the string's room in one copy, then each run between escapes moves forward within
  // `out` (a copy within one buffer costs less per run than a copy from another): a run is never written past
  // the bytes still to move, since each lies behind its source by the escapes before it, no more.
  const source = end - 1 - n;
  utf8.copy(out, source);
  let at = start + 1;
  let run = 0;
  for (const p of positions) {
    if (p > run) {
      out.copyWithin(at, source + run, source + p);
      at += p - run;
    }
    const b = utf8[p]!;
    out[at++] = BACKSLASH;
    const letter = SHORT[b]!;
    if (letter !== 0) out[at++] = letter;
    else {
      out[at++] = 0x75; // u
      out[at++] = 0x30;
      out[at++] = 0x30;
      out[at++] = HEX[b >> 4]!;
      out[at++] = HEX[b & 15]!;
    }
    run = p + 1;
  }
  if (run < n) {
    out.copyWithin(at, source + run, source + n);
    at += n - run;
  }
  out[at++] = QUOTE;
  return at;
}
