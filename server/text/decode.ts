// The two decoders over the one detector. The lossy one is what reads show: any text file decodes, bytes that
// are not UTF-8 become U+FFFD, and offsets still map to the bytes on disk. The exact one is what mutations edit:
// it decodes only when re-encoding gives back the very same bytes, so untouched parts survive byte for byte.
import { isUtf8 } from "node:buffer";
import { ErrorCode, ToolError } from "../errors.js";
import { detectEncoding, detectNewlines } from "./detect.js";
import { encodeText } from "./encode.js";
import { ENCODING_FACTS } from "./encodings.js";
import { countCodePoints } from "./lines.js";
import { TEXT_ENCODINGS, type Newline, type NewlineStyle, type TextEncoding } from "./types.js";
import { decodeUtf32 } from "./utf32.js";

export interface TextFile {
  kind: "text";
  encoding: TextEncoding;
  /** Length of the byte order mark on disk (0, 2, 3 or 4). */
  bomBytes: number;
  /** The content as UTF-8: the file's own bytes for UTF-8 files, transcoded for UTF-16 and UTF-32. BOM excluded. */
  utf8: Buffer;
  /** True when a UTF-8 file holds byte sequences that are not UTF-8 (they decode to U+FFFD). */
  invalidUtf8: boolean;
}

export interface BinaryFile {
  kind: "binary";
}

/** The lossy view of file bytes: text (UTF-8 as it is, UTF-16 and UTF-32 transcoded) or binary (a NUL unit). */
export function decodeLossy(bytes: Buffer): TextFile | BinaryFile {
  const { encoding, bomBytes, binary } = detectEncoding(bytes);
  if (binary) return { kind: "binary" };
  const body = bytes.subarray(bomBytes);
  const { unitBytes, bigEndian } = ENCODING_FACTS[encoding];
  if (unitBytes === 1) return { kind: "text", encoding, bomBytes, utf8: body, invalidUtf8: !isUtf8(body) };
  // Each code unit that does not decode becomes exactly one U+FFFD, so diskOffsetOf can count units back:
  // TextDecoder does so for lone surrogates and a trailing odd byte (as ripgrep does), decodeUtf32 for code
  // points above U+10FFFF, surrogates and a trailing partial unit. TextDecoder's default also drops a second
  // BOM right after the first (the UTF-8 path keeps it as U+FEFF); diskOffsetOf then runs two bytes short
  // for such a file.
  const text =
    unitBytes === 2
      ? new TextDecoder(bigEndian ? "utf-16be" : "utf-16le").decode(body)
      : decodeUtf32(body, bigEndian, false)!;
  return { kind: "text", encoding, bomBytes, utf8: Buffer.from(text, "utf8"), invalidUtf8: false };
}

/**
 * Byte offset in the file on disk of a UTF-8 offset into `file.utf8`. The offset must sit on a code point
 * boundary (line starts and UTF-8-safe cuts always do).
 */
export function diskOffsetOf(file: TextFile, utf8Offset: number): number {
  const { unitBytes } = ENCODING_FACTS[file.encoding];
  if (unitBytes === 1) return file.bomBytes + utf8Offset;
  const prefix = file.utf8.subarray(0, utf8Offset);
  if (unitBytes === 2) return file.bomBytes + 2 * prefix.toString("utf8").length;
  return file.bomBytes + 4 * countCodePoints(prefix);
}

/** A file decoded exactly: encodeText(text, encoding) gives back its bytes. */
export interface DecodedText {
  text: string;
  encoding: TextEncoding;
  /** The file's dominant newline, used for lines we write into it; LF when it has none. */
  newline: Newline;
  style: NewlineStyle;
}

export type DecodeOutcome =
  { ok: true; decoded: DecodedText } | { ok: false; reason: "binary" | "not_round_trippable" };

/** The exact decoder: the text and how to write it back, or why any rewrite would change other bytes. */
export function decodeExact(bytes: Buffer): DecodeOutcome {
  const { encoding, bomBytes, binary } = detectEncoding(bytes);
  const { unitBytes } = ENCODING_FACTS[encoding];
  // UTF-8 is judged binary before it is decoded, UTF-16 and UTF-32 only once they decode (the order edits
  // have always used).
  if (binary && unitBytes === 1) return { ok: false, reason: "binary" };
  const text = decodeStrict(bytes.subarray(bomBytes), encoding);
  if (text === undefined) return { ok: false, reason: "not_round_trippable" };
  if (binary) return { ok: false, reason: "binary" };
  // The guarantee every mutation relies on: untouched parts of the file come back byte for byte. Valid UTF-8
  // always does (one encoding per code point), so only UTF-16 and UTF-32 are encoded again to check it.
  if (unitBytes !== 1 && !encodeText(text, encoding).equals(bytes)) return { ok: false, reason: "not_round_trippable" };
  return { ok: true, decoded: { text, encoding, ...detectNewlines(text) } };
}

/** The body's text, or undefined when any byte does not decode (invalid UTF-8, a lone surrogate, a bad length...). */
function decodeStrict(body: Buffer, encoding: TextEncoding): string | undefined {
  const { unitBytes, bigEndian } = ENCODING_FACTS[encoding];
  if (unitBytes === 4) return decodeUtf32(body, bigEndian, true);
  // isUtf8 validates as the fatal decoder does (no overlong forms, surrogates or code points past U+10FFFF), and
  // toString keeps a leading U+FEFF as ignoreBOM does, at a fraction of its cost on a large file.
  if (unitBytes === 1) return isUtf8(body) ? body.toString("utf8") : undefined;
  const label = bigEndian ? "utf-16be" : "utf-16le";
  try {
    // ignoreBOM keeps a second BOM in the text instead of swallowing it.
    return new TextDecoder(label, { fatal: true, ignoreBOM: true }).decode(body);
  } catch {
    return undefined;
  }
}

/** Decodes a file a mutation must edit, or explains why it cannot be edited byte-exactly. */
export function decodeForEdit(bytes: Buffer, display: string): DecodedText {
  const outcome = decodeExact(bytes);
  if (outcome.ok) return outcome.decoded;
  if (outcome.reason === "binary") {
    throw new ToolError(
      ErrorCode.binaryFile,
      `${display} looks binary (it holds NUL bytes); text edits would corrupt it.`,
      {
        detail: { path: display },
        retryable: false,
      },
    );
  }
  throw new ToolError(
    ErrorCode.unsupportedEncoding,
    `${display} is not UTF-8, UTF-16 or UTF-32 that round-trips exactly (it holds bytes that do not decode: e.g. Latin-1, a lone surrogate, a code point above U+10FFFF, or a partial code unit), so it cannot be edited without changing other bytes. Use /w to replace it whole after reading it.`,
    {
      detail: { path: display, supported: [...TEXT_ENCODINGS] },
      retryable: false,
    },
  );
}
