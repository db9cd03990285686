// The two decoders over the one detector. The lossy one is what reads show: any text file decodes, bytes that
// are not UTF-8 become U+FFFD, and offsets still map to the bytes on disk. The exact one is what mutations edit:
// it decodes only when re-encoding gives back the very same bytes, so untouched parts survive byte for byte.
import { isUtf8 } from "node:buffer";
import { ErrorCode, ToolError } from "../errors.js";
import { detectEncoding, detectNewlines } from "./detect.js";
import { encodeText } from "./encode.js";
import type { Newline, NewlineStyle, TextEncoding } from "./types.js";

export interface TextFile {
  kind: "text";
  encoding: TextEncoding;
  /** Length of the byte order mark on disk (0, 2 or 3). */
  bomBytes: number;
  /** The content as UTF-8: the file's own bytes for UTF-8 files, transcoded for UTF-16. BOM excluded. */
  utf8: Buffer;
  /** True when a UTF-8 file holds byte sequences that are not UTF-8 (they decode to U+FFFD). */
  invalidUtf8: boolean;
}

export interface BinaryFile {
  kind: "binary";
}

/** The lossy view of file bytes: text (UTF-8 as it is, UTF-16 transcoded) or binary (a NUL, or UTF-32). */
export function decodeLossy(bytes: Buffer): TextFile | BinaryFile {
  const { encoding, bomBytes, binary } = detectEncoding(bytes);
  if (binary || encoding === "utf-32le" || encoding === "utf-32be") return { kind: "binary" };
  const body = bytes.subarray(bomBytes);
  if (encoding === "utf-8" || encoding === "utf-8-bom") return { kind: "text", encoding, bomBytes, utf8: body, invalidUtf8: !isUtf8(body) };
  // TextDecoder turns a trailing odd byte and lone surrogates into U+FFFD, as ripgrep does. Its default also
  // drops a second BOM right after the first (the UTF-8 path keeps it as U+FEFF); diskOffsetOf then runs two
  // bytes short for such a file.
  const text = new TextDecoder(encoding).decode(body);
  return { kind: "text", encoding, bomBytes, utf8: Buffer.from(text, "utf8"), invalidUtf8: false };
}

/**
 * Byte offset in the file on disk of a UTF-8 offset into `file.utf8`. The offset must sit on a code point
 * boundary (line starts and UTF-8-safe cuts always do).
 */
export function diskOffsetOf(file: TextFile, utf8Offset: number): number {
  if (file.encoding === "utf-8" || file.encoding === "utf-8-bom") return file.bomBytes + utf8Offset;
  return file.bomBytes + 2 * file.utf8.subarray(0, utf8Offset).toString("utf8").length;
}

/** A file decoded exactly: encodeText(text, encoding) gives back its bytes. */
export interface DecodedText {
  text: string;
  encoding: TextEncoding;
  /** The file's dominant newline, used for lines we write into it; LF when it has none. */
  newline: Newline;
  style: NewlineStyle;
}

export type DecodeOutcome = { ok: true; decoded: DecodedText } | { ok: false; reason: "binary" | "not_round_trippable" };

/** The exact decoder: the text and how to write it back, or why any rewrite would change other bytes. */
export function decodeExact(bytes: Buffer): DecodeOutcome {
  const { encoding, bomBytes, binary } = detectEncoding(bytes);
  // UTF-32 is recognised by its BOM and not (yet) written back.
  if (encoding === "utf-32le" || encoding === "utf-32be") return { ok: false, reason: "not_round_trippable" };
  const utf16 = encoding === "utf-16le" || encoding === "utf-16be";
  // UTF-8 is judged binary before it is decoded, UTF-16 only once it decodes (the order edits have always used).
  if (binary && !utf16) return { ok: false, reason: "binary" };
  let text: string;
  try {
    // ignoreBOM keeps a second BOM in the text instead of swallowing it.
    text = new TextDecoder(encoding === "utf-8-bom" ? "utf-8" : encoding, { fatal: true, ignoreBOM: true }).decode(bytes.subarray(bomBytes));
  } catch {
    return { ok: false, reason: "not_round_trippable" };
  }
  if (binary) return { ok: false, reason: "binary" };
  // The guarantee every mutation relies on: untouched parts of the file come back byte for byte.
  if (!encodeText(text, encoding).equals(bytes)) return { ok: false, reason: "not_round_trippable" };
  return { ok: true, decoded: { text, encoding, ...detectNewlines(text) } };
}

/** Decodes a file a mutation must edit, or explains why it cannot be edited byte-exactly. */
export function decodeForEdit(bytes: Buffer, display: string): DecodedText {
  const outcome = decodeExact(bytes);
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
