// Request targets as bytes. Some URL readers (curl among them) send what the agent typed: raw UTF-8,
// control characters, even spaces. Node's HTTP parser refuses those bytes, so we re-encode them.

const PRINTABLE_ASCII_MIN = 0x21;
const PRINTABLE_ASCII_MAX = 0x7e;

const isPlainTargetByte = (b: number) => b >= PRINTABLE_ASCII_MIN && b <= PRINTABLE_ASCII_MAX;

/** True when the target holds a byte Node's parser would refuse (non-ASCII, control, space). */
export function hasUnencodedTargetBytes(target: Buffer): boolean {
  return target.some((b) => !isPlainTargetByte(b));
}

/**
 * Percent-encodes every byte outside printable ASCII, leaving the rest byte-identical. This is exactly
 * what a well-behaved reader would have sent: UTF-8 text becomes its %XX bytes and decodes back to itself.
 */
export function percentEncodeTargetBytes(target: Buffer): string {
  let out = "";
  for (const b of target) {
    out += isPlainTargetByte(b) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}
