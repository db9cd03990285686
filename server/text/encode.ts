// Text back to bytes in a file's own encoding and BOM, and newline conversion for the lines a mutation writes.
import type { Newline, TextEncoding } from "./types.js";

const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const UTF16LE_BOM = Buffer.from([0xff, 0xfe]);
const UTF16BE_BOM = Buffer.from([0xfe, 0xff]);

export function encodeText(text: string, encoding: TextEncoding): Buffer {
  switch (encoding) {
    case "utf-8":
      return Buffer.from(text, "utf8");
    case "utf-8-bom":
      return Buffer.concat([UTF8_BOM, Buffer.from(text, "utf8")]);
    case "utf-16le":
      return Buffer.concat([UTF16LE_BOM, Buffer.from(text, "utf16le")]);
    case "utf-16be":
      return Buffer.concat([UTF16BE_BOM, Buffer.from(text, "utf16le").swap16()]);
  }
}

/** Rewrites every newline (CRLF, CR or LF) in text as `newline`. */
export function convertNewlines(text: string, newline: Newline): string {
  return text.replace(/\r\n|\r|\n/g, newline);
}
