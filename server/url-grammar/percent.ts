// Tolerant percent-decoding: valid %XX runs that form UTF-8 are decoded, anything else stays verbatim.
// URL readers add, double or garble percent-encoding; a stray % must never crash the decoder.

const HEX = /^[0-9A-Fa-f]{2}$/;
// ignoreBOM: by default TextDecoder drops a leading U+FEFF, and every sequence here is decoded on its own,
// so an encoded BOM (%EF%BB%BF) anywhere in the text would silently vanish.
const fatalUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

function hexAt(s: string, i: number): number | undefined {
  const pair = s.slice(i + 1, i + 3);
  return s[i] === "%" && HEX.test(pair) ? parseInt(pair, 16) : undefined;
}

function sequenceLength(lead: number): number {
  if (lead < 0x80) return 1;
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  return 0;
}

/** Decodes one run of consecutive %XX escapes; bytes that are not valid UTF-8 keep their original %XX text. */
function decodeRun(bytes: number[], texts: string[]): string {
  let out = "";
  let k = 0;
  while (k < bytes.length) {
    const len = sequenceLength(bytes[k]!);
    if (len > 0 && k + len <= bytes.length) {
      try {
        out += fatalUtf8.decode(Uint8Array.from(bytes.slice(k, k + len)));
        k += len;
        continue;
      } catch {
        // not a valid sequence: fall through and keep the lead byte verbatim
      }
    }
    out += texts[k];
    k += 1;
  }
  return out;
}

export function decodePercent(s: string): string {
  if (!s.includes("%")) return s;
  let out = "";
  let i = 0;
  while (i < s.length) {
    if (hexAt(s, i) === undefined) {
      out += s[i];
      i += 1;
      continue;
    }
    const bytes: number[] = [];
    const texts: string[] = [];
    let byte: number | undefined;
    while ((byte = hexAt(s, i)) !== undefined) {
      bytes.push(byte);
      texts.push(s.slice(i, i + 3));
      i += 3;
    }
    out += decodeRun(bytes, texts);
  }
  return out;
}

/**
 * How many layers of percent-encoding are undone. Readers and proxies that re-encode an already encoded URL
 * turn %22 into %2522 (and again into %252522); three layers covers every stack we have seen with room.
 */
export const MAX_PERCENT_LAYERS = 4;

/**
 * Undoes up to MAX_PERCENT_LAYERS layers of percent-encoding. Sound because our grammar never asks a client
 * to percent-encode a literal %: that is ~p, so a %XX still present after one decode was put there by a
 * reader or proxy re-encoding an encoded URL (docs/TRANSPORT_GYM.md, "Double encoding").
 */
export function decodePercentLayers(s: string): string {
  let current = s;
  for (let layer = 0; layer < MAX_PERCENT_LAYERS && current.includes("%"); layer++) {
    const next = decodePercent(current);
    if (next === current) break;
    current = next;
  }
  return current;
}

/**
 * Query-component decoding: an unescaped + on the wire is a space (some readers rewrite spaces that way),
 * then every percent layer. A + that appears only after decoding (%2B) is a literal plus.
 */
export function decodeQueryComponent(s: string): string {
  return decodePercentLayers(s.replace(/\+/g, " "));
}
