// What each text encoding is on disk: its code unit width, byte order, the BOM it writes, and whether ripgrep
// decodes it (rg reads only UTF-8 and BOM-marked UTF-16 as text; anything else holding NUL bytes is binary to it).
import type { TextEncoding } from "./types.js";

export interface EncodingFacts {
  /** Bytes per code unit: 1 (UTF-8), 2 (UTF-16) or 4 (UTF-32). */
  unitBytes: 1 | 2 | 4;
  bigEndian: boolean;
  /** The byte order mark this encoding starts with on disk; empty for the BOM-less ones. */
  bom: Buffer;
  /** ripgrep searches such a file as text (so /g does too); the others it skips as binary. */
  ripgrep: boolean;
}

const facts = (unitBytes: 1 | 2 | 4, bigEndian: boolean, bom: number[], ripgrep: boolean): EncodingFacts => ({
  unitBytes,
  bigEndian,
  bom: Buffer.from(bom),
  ripgrep,
});

export const ENCODING_FACTS: Readonly<Record<TextEncoding, EncodingFacts>> = {
  "utf-8": facts(1, false, [], true),
  "utf-8-bom": facts(1, false, [0xef, 0xbb, 0xbf], true),
  "utf-16le": facts(2, false, [0xff, 0xfe], true),
  "utf-16be": facts(2, true, [0xfe, 0xff], true),
  "utf-16le-no-bom": facts(2, false, [], false),
  "utf-16be-no-bom": facts(2, true, [], false),
  "utf-32le": facts(4, false, [0xff, 0xfe, 0x00, 0x00], false),
  "utf-32be": facts(4, true, [0x00, 0x00, 0xfe, 0xff], false),
};

/** True when ripgrep (and so /g, whose portable engine follows it) searches files in this encoding. */
export function ripgrepSearches(encoding: TextEncoding): boolean {
  return ENCODING_FACTS[encoding].ripgrep;
}
