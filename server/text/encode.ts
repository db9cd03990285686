// Text back to bytes in a file's own encoding and BOM, and newline conversion for the lines a mutation writes.
import { ENCODING_FACTS } from "./encodings.js";
import type { Newline, TextEncoding } from "./types.js";
import { encodeUtf32 } from "./utf32.js";

/** The bytes of `text` in `encoding`, its BOM first (none for utf-8 and the -no-bom encodings). */
export function encodeText(text: string, encoding: TextEncoding): Buffer {
  const { bom, bigEndian } = ENCODING_FACTS[encoding];
  switch (encoding) {
    case "utf-8":
    case "utf-8-bom":
      return withBom(bom, Buffer.from(text, "utf8"));
    case "utf-16le":
    case "utf-16be":
    case "utf-16le-no-bom":
    case "utf-16be-no-bom": {
      const body = Buffer.from(text, "utf16le");
      return withBom(bom, bigEndian ? body.swap16() : body);
    }
    case "utf-32le":
    case "utf-32be":
      return withBom(bom, encodeUtf32(text, bigEndian));
  }
}

function withBom(bom: Buffer, body: Buffer): Buffer {
  return bom.length === 0 ? body : Buffer.concat([bom, body]);
}

/** Rewrites every newline (CRLF, CR or LF) in text as `newline`. */
export function convertNewlines(text: string, newline: Newline): string {
  return text.replace(/\r\n|\r|\n/g, newline);
}
