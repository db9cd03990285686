// JSON written from UTF-8 bytes: a result notes which of its strings were decoded from which bytes, and a writer
// escapes those bytes as the string's JSON instead of escaping the decoded text and encoding it again (issue 34).
import { isUtf8 } from "node:buffer";
import { randomBytes } from "node:crypto";
import { planJsonEscape, type JsonEscape } from "./json-escape.js";

/** holder[key] is the UTF-8 decoding of bytes. */
export interface Utf8Source {
  holder: object;
  key: string;
  bytes: Buffer;
}

/**
 * Where a result keeps its sources: a property no JSON writer or equality sees (a symbol, not enumerable), not a
 * WeakMap, whose entries survived young-generation collections with each page's bytes (issue 34: a read-through
 * paid more in garbage collection than the writer saved).
 */
const SOURCES = Symbol("urlbridge.utf8Sources");

/** Says that each source's string in `result` was decoded from its bytes; the result must not change after. */
export function noteUtf8Sources(result: object, sources: readonly Utf8Source[]): void {
  if (sources.length > 0) Object.defineProperty(result, SOURCES, { value: sources, enumerable: false });
}

/** The result's sources; a copy of the result (a spread) has none. */
export function utf8SourcesOf(result: object): readonly Utf8Source[] | undefined {
  return (result as { [SOURCES]?: readonly Utf8Source[] })[SOURCES];
}

/**
 * Bytes the noted strings of a result must hold together for their bytes to be written: below it, JSON.stringify
 * of the whole answer costs as little (its text stays in V8's young generation; measured on 2-32 KiB reads).
 */
export const MIN_SPLICED_BYTES = 16 * 1024;

/**
 * The UTF-8 bytes of JSON.stringify(bytes.toString("utf8")), planned; undefined when the bytes are not valid UTF-8
 * (their decoding replaced some of them) or are dense in escapes (json-escape.ts), which JSON.stringify serves.
 */
export function jsonOfUtf8(bytes: Buffer): JsonEscape | undefined {
  return isUtf8(bytes) ? planJsonEscape(bytes) : undefined;
}

/** A JSON text in pieces: UTF-16 text to encode as UTF-8, and strings written from their bytes, in order. */
export interface JsonPieces {
  pieces: Array<string | JsonEscape>;
  /** Bytes the pieces take. */
  size: number;
}

/** Marks a spliced string in the JSON text; random per process, so no string of a result can hold it by chance. */
const MARK = `urlbridge-utf8-${randomBytes(12).toString("hex")}-`;

/**
 * JSON.stringify(value) in pieces, each noted string written from its bytes. Undefined when that would not pay
 * (the sources hold under MIN_SPLICED_BYTES, or one's bytes are dense in escapes) or cannot be done (a source's
 * bytes are not valid UTF-8, its holder is not found in `value`): the caller then stringifies as usual.
 */
export function stringifyUtf8Sources(value: object, sources: readonly Utf8Source[]): JsonPieces | undefined {
  let held = 0;
  for (const source of sources) held += source.bytes.length;
  if (held < MIN_SPLICED_BYTES) return undefined;
  const marks = new Map<object, Map<string, number>>();
  const escaped: JsonEscape[] = [];
  for (const [i, source] of sources.entries()) {
    const text = (source.holder as Record<string, unknown>)[source.key];
    if (typeof text !== "string") return undefined;
    const json = jsonOfUtf8(source.bytes);
    if (json === undefined) return undefined;
    escaped.push(json);
    const keys = marks.get(source.holder) ?? new Map<string, number>();
    keys.set(source.key, i);
    marks.set(source.holder, keys);
  }
  const json = JSON.stringify(value, function (this: object, key: string, v: unknown) {
    const i = marks.get(this)?.get(key);
    return i === undefined ? v : `${MARK}${i}`;
  });
  const pieces: JsonPieces["pieces"] = [];
  let size = 0;
  let from = 0;
  for (const [i, escape] of escaped.entries()) {
    const mark = `"${MARK}${i}"`;
    const at = json.indexOf(mark);
    // Each mark stands once in the text, in the order the sources were noted; anything else is not our text.
    if (at < from || json.indexOf(mark, at + mark.length) !== -1) return undefined;
    const text = json.slice(from, at);
    pieces.push(text, escape);
    size += Buffer.byteLength(text, "utf8") + escape.size;
    from = at + mark.length;
  }
  const rest = json.slice(from);
  pieces.push(rest);
  size += Buffer.byteLength(rest, "utf8");
  return { pieces, size };
}

/** `head`, then the pieces' bytes, less the first `skip` bytes of the first piece (ASCII, such as an opening brace). */
export function writeJsonPieces(json: JsonPieces, head: Buffer, skip: number): Buffer {
  const out = Buffer.allocUnsafe(head.length + json.size - skip);
  let at = head.copy(out, 0);
  for (const [i, piece] of json.pieces.entries()) {
    if (typeof piece !== "string") at = piece.write(out, at);
    else at += out.write(i === 0 ? piece.slice(skip) : piece, at, "utf8");
  }
  // Never send memory allocUnsafe did not clear.
  if (at !== out.length) throw new Error(`a JSON text was written as ${at} bytes, not ${out.length}`);
  return out;
}
