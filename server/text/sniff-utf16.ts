// Guessing UTF-16 without a byte order mark. A guess can only turn a file that would otherwise be binary into
// text: detect.ts asks only about files that have no BOM and hold a zero byte, so UTF-8 and ASCII text (which
// never holds one) can never change class, and everything this refuses stays binary as before.
//
// The signal: most text in any script has plenty of ASCII (spaces, newlines, digits, punctuation), and each
// such character in UTF-16 is one zero byte in the high half of its code unit, while the low half is almost
// never zero (only U+xx00 characters). Binary formats fail at least one of the checks below: images,
// archives and executables hold NUL code units (two aligned zero bytes: PNG's chunk lengths, ELF's header)
// or spread their zero bytes over both halves; compressed or random bytes have almost no zero bytes in
// either half, and what they decode to is full of control characters and unpaired surrogates.

/** Shorter files are left binary: too few code units to tell text from data. */
export const MIN_SNIFF_BYTES = 8;
/** Only the first 64 KiB are weighed (the whole file is still checked for NUL units and decoded). */
export const SNIFF_SAMPLE_BYTES = 64 * 1024;
/** At least a fifth of the code units must have a zero high byte (ASCII and Latin-1 characters). */
const MIN_ZERO_HIGH_SHARE = 0.2;
/**
 * At most one zero low byte (U+0100, U+4E00, the low surrogate of 😀...) for every eight zero high bytes: a
 * ratio rather than a share, so one such character does not disqualify a short file.
 */
const MAX_ZERO_LOW_PER_ZERO_HIGH = 1 / 8;
/** At most one code unit in a hundred may be a control character other than tab, newlines, FF, VT and ESC. */
const MAX_CONTROL_SHARE = 0.01;

export type BomlessUtf16 = "utf-16le-no-bom" | "utf-16be-no-bom";

/** The BOM-less UTF-16 byte order `bytes` (no BOM, holding a zero byte) is text in, or undefined. */
export function sniffUtf16(bytes: Buffer): BomlessUtf16 | undefined {
  if (bytes.length < MIN_SNIFF_BYTES || bytes.length % 2 !== 0) return undefined;
  const sample = bytes.subarray(0, Math.min(bytes.length, SNIFF_SAMPLE_BYTES));
  const units = sample.length / 2;
  let evenZeros = 0;
  let oddZeros = 0;
  for (let i = 0; i < sample.length; i += 2) {
    const even = sample[i] === 0;
    const odd = sample[i + 1] === 0;
    // U+0000: binary in either byte order (the rule every reader applies to UTF-16).
    if (even && odd) return undefined;
    if (even) evenZeros++;
    if (odd) oddZeros++;
  }
  // Little endian puts the high byte second (odd offsets), big endian first.
  const bigEndian = evenZeros > oddZeros;
  const zeroHigh = bigEndian ? evenZeros : oddZeros;
  const zeroLow = bigEndian ? oddZeros : evenZeros;
  if (zeroHigh < units * MIN_ZERO_HIGH_SHARE || zeroLow > zeroHigh * MAX_ZERO_LOW_PER_ZERO_HIGH) return undefined;
  const controls = countControlsIfWellFormed(sample, bigEndian, sample.length < bytes.length);
  if (controls === undefined || controls > units * MAX_CONTROL_SHARE) return undefined;
  return bigEndian ? "utf-16be-no-bom" : "utf-16le-no-bom";
}

/** Control characters in the sample, or undefined at an unpaired surrogate or a noncharacter U+FFFE/U+FFFF. */
function countControlsIfWellFormed(sample: Buffer, bigEndian: boolean, truncated: boolean): number | undefined {
  const unitAt = (i: number) => (bigEndian ? sample.readUInt16BE(i) : sample.readUInt16LE(i));
  let controls = 0;
  for (let i = 0; i < sample.length; i += 2) {
    const u = unitAt(i);
    if (u >= 0xd800 && u <= 0xdbff) {
      // A high surrogate cut off by the sample's end is given the benefit of the doubt.
      if (i + 2 >= sample.length) return truncated ? controls : undefined;
      const next = unitAt(i + 2);
      if (next < 0xdc00 || next > 0xdfff) return undefined;
      i += 2;
    } else if (u >= 0xdc00 && u <= 0xdfff) return undefined;
    // U+FFFE is a BOM read in the wrong byte order: a sign of data, not text.
    else if (u === 0xfffe || u === 0xffff) return undefined;
    else if (isControl(u)) controls++;
  }
  return controls;
}

/** C0 controls except tab, LF, VT, FF, CR and ESC (ANSI colour in logs); DEL; C1 controls. */
function isControl(u: number): boolean {
  if (u < 0x20) return !(u >= 0x09 && u <= 0x0d) && u !== 0x1b;
  return u >= 0x7f && u <= 0x9f;
}
