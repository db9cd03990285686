// The byte-exact text codec for mutations: detects encoding (UTF-8 with or without BOM, UTF-16 LE/BE with
// BOM) and newline style, decodes only when re-encoding gives back the very same bytes, and encodes back.
import { ErrorCode, ToolError } from "../errors.js";

export type TextEncoding = "utf-8" | "utf-8-bom" | "utf-16le" | "utf-16be";
export type Newline = "\n" | "\r\n" | "\r";
export type NewlineStyle = "lf" | "crlf" | "cr" | "mixed" | "none";

export interface DecodedText {
  text: string;
  encoding: TextEncoding;
  /** The file's dominant newline, used for lines we write into it; LF when it has none. */
  newline: Newline;
  style: NewlineStyle;
}

const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const UTF16LE_BOM = Buffer.from([0xff, 0xfe]);
const UTF16BE_BOM = Buffer.from([0xfe, 0xff]);
const NAMES: Record<Newline, NewlineStyle> = { "\n": "lf", "\r\n": "crlf", "\r": "cr" };

export type DecodeOutcome = { ok: true; decoded: DecodedText } | { ok: false; reason: "binary" | "not_round_trippable" };

export function decodeText(bytes: Buffer): DecodeOutcome {
  let encoding: TextEncoding;
  let text: string;
  try {
    if (bytes.subarray(0, 2).equals(UTF16LE_BOM)) {
      // FF FE 00 00 is a UTF-32 LE BOM, which we do not write.
      if (bytes.length >= 4 && bytes[2] === 0 && bytes[3] === 0) return { ok: false, reason: "not_round_trippable" };
      encoding = "utf-16le";
      text = new TextDecoder("utf-16le", { fatal: true, ignoreBOM: true }).decode(bytes.subarray(2));
    } else if (bytes.subarray(0, 2).equals(UTF16BE_BOM)) {
      encoding = "utf-16be";
      text = new TextDecoder("utf-16be", { fatal: true, ignoreBOM: true }).decode(bytes.subarray(2));
    } else {
      const bom = bytes.subarray(0, 3).equals(UTF8_BOM);
      const body = bom ? bytes.subarray(3) : bytes;
      if (body.includes(0)) return { ok: false, reason: "binary" };
      encoding = bom ? "utf-8-bom" : "utf-8";
      text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(body);
    }
  } catch {
    return { ok: false, reason: "not_round_trippable" };
  }
  if (text.includes("\u0000") && encoding.startsWith("utf-16")) return { ok: false, reason: "binary" };
  // The guarantee every mutation relies on: untouched parts of the file come back byte for byte.
  if (!encodeText(text, encoding).equals(bytes)) return { ok: false, reason: "not_round_trippable" };
  const { newline, style } = detectNewlines(text);
  return { ok: true, decoded: { text, encoding, newline, style } };
}

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

/** Counts CRLF, lone LF and lone CR; the most frequent is the file's newline (LF wins ties and empty files). */
export function detectNewlines(text: string): { newline: Newline; style: NewlineStyle } {
  let crlf = 0;
  let lf = 0;
  let cr = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 13) {
      if (text.charCodeAt(i + 1) === 10) {
        crlf++;
        i++;
      } else cr++;
    } else if (c === 10) lf++;
  }
  const kinds = [crlf, lf, cr].filter((n) => n > 0).length;
  const newline: Newline = crlf > lf && crlf >= cr ? "\r\n" : cr > lf && cr > crlf ? "\r" : "\n";
  return { newline, style: kinds === 0 ? "none" : kinds > 1 ? "mixed" : NAMES[newline] };
}

/** Rewrites every newline (CRLF, CR or LF) in text as `newline`. */
export function convertNewlines(text: string, newline: Newline): string {
  return text.replace(/\r\n|\r|\n/g, newline);
}

/** Decodes a file a mutation must edit, or explains why it cannot be edited byte-exactly. */
export function decodeForEdit(bytes: Buffer, display: string): DecodedText {
  const outcome = decodeText(bytes);
  if (outcome.ok) return outcome.decoded;
  if (outcome.reason === "binary") {
    throw new ToolError(ErrorCode.binaryFile, `${display} looks binary (it holds NUL bytes); text edits would corrupt it.`, {
      detail: { path: display },
      retryable: false,
    });
  }
  throw new ToolError(ErrorCode.unsupportedEncoding, `${display} is not UTF-8 or BOM-marked UTF-16 that round-trips exactly, so it cannot be edited without changing other bytes. Use /w to replace it whole after reading it.`, {
    detail: { path: display, supported: ["utf-8", "utf-8-bom", "utf-16le (BOM)", "utf-16be (BOM)"] },
    retryable: false,
  });
}
