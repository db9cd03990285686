// UTF-32 (LE/BE) by hand: neither Buffer nor TextDecoder knows it. One code point per 4-byte unit, so a
// UTF-8 offset maps back to the disk by counting code points (decode.ts's diskOffsetOf).

const REPLACEMENT = 0xfffd;
const MAX_CODE_POINT = 0x10ffff;

const isScalarValue = (cp: number) => cp <= MAX_CODE_POINT && (cp < 0xd800 || cp > 0xdfff);

/**
 * Decodes a UTF-32 body (BOM excluded). Lossy (`fatal` false): each unit that is no Unicode scalar value
 * (above U+10FFFF, or a surrogate) and a trailing partial unit become one U+FFFD each. Fatal: undefined instead.
 */
export function decodeUtf32(body: Buffer, bigEndian: boolean, fatal: boolean): string | undefined {
  const units = Math.floor(body.length / 4);
  const partial = body.length % 4 !== 0;
  if (fatal && partial) return undefined;
  // At most two UTF-16 code units per code point, one more for the partial unit.
  const out = Buffer.allocUnsafe(4 * units + 2);
  let at = 0;
  for (let i = 0; i < units; i++) {
    let cp = bigEndian ? body.readUInt32BE(4 * i) : body.readUInt32LE(4 * i);
    if (!isScalarValue(cp)) {
      if (fatal) return undefined;
      cp = REPLACEMENT;
    }
    if (cp > 0xffff) {
      const v = cp - 0x10000;
      at = out.writeUInt16LE(0xd800 + (v >> 10), at);
      at = out.writeUInt16LE(0xdc00 + (v & 0x3ff), at);
    } else at = out.writeUInt16LE(cp, at);
  }
  if (partial) at = out.writeUInt16LE(REPLACEMENT, at);
  return out.toString("utf16le", 0, at);
}

/** Encodes text as UTF-32 without a BOM; a lone surrogate is written as U+FFFD, as Buffer does for UTF-8. */
export function encodeUtf32(text: string, bigEndian: boolean): Buffer {
  const out = Buffer.allocUnsafe(4 * text.length);
  let at = 0;
  for (const ch of text) {
    let cp = ch.codePointAt(0)!;
    if (cp >= 0xd800 && cp <= 0xdfff) cp = REPLACEMENT;
    at = bigEndian ? out.writeUInt32BE(cp, at) : out.writeUInt32LE(cp, at);
  }
  return out.subarray(0, at);
}
