// Writes data-plane answers straight to node:http: compact JSON kept as a range-replay snapshot, with a
// small rangeFallback object at the front when the body is larger than one range part.
import type http from "node:http";
import type { SessionState } from "../kernel/tool/session-state.js";
import { RANGE_PART_BYTES } from "../url-grammar/range-replay.js";
import { JSON_CONTENT_TYPE, sendBytes } from "../edge/http-answer.js";
import { stringifyUtf8Sources, utf8SourcesOf, writeJsonPieces, type Utf8Source } from "../text/utf8-json.js";

// The bytes-level answers both edges write live in edge/http-answer.ts; the gateway's modules keep this name.
export {
  JSON_CONTENT_TYPE,
  OPAQUE_NOT_FOUND,
  sendBytes,
  sendMethodNotAllowed,
  sendOpaqueNotFound,
  TEXT_CONTENT_TYPE,
} from "../edge/http-answer.js";

/**
 * Serializes a JSON answer for the call's session: the fallback URL in front of a large body uses `baseUrl`,
 * the capability base the call arrived on. The bytes are what gets sent and what /z replays. `sources`: the
 * body's strings decoded from UTF-8 bytes (a read's pages), written from their bytes.
 */
export function serializeAgentJson(
  state: SessionState,
  body: object,
  baseUrl: string,
  sources: readonly Utf8Source[] | undefined = utf8SourcesOf(body),
): { id: string; bytes: Buffer } {
  const spliced = sources === undefined ? undefined : stringifyUtf8Sources(body, sources);
  if (spliced !== undefined) {
    const id = state.snapshots.newId();
    if (spliced.size <= RANGE_PART_BYTES) return { id, bytes: writeJsonPieces(spliced, EMPTY, 0) };
    return { id, bytes: writeJsonPieces(spliced, fallbackHead(id, baseUrl), 1) };
  }
  const json = JSON.stringify(body);
  const id = state.snapshots.newId();
  // A UTF-16 unit is 1-3 UTF-8 bytes: a short answer is within one range part without counting them.
  const size = 3 * json.length > RANGE_PART_BYTES ? Buffer.byteLength(json, "utf8") : json.length;
  if (json.length <= 2 || size <= RANGE_PART_BYTES) return { id, bytes: Buffer.from(json, "utf8") };
  // Splice the fallback in front of the already serialized body rather than serializing it twice.
  // Spliced as bytes: a string spliced in front of a 128 KiB body is flattened again before encoding, which cost a
  // page of a large file ~0.25 ms more than encoding it (issue 34's read-through profile).
  return { id, bytes: encodeText(json.slice(1), size - 1, fallbackHead(id, baseUrl)) };
}

const EMPTY = Buffer.alloc(0);

/**
 * The front of a body larger than one range part, up to the body's first member: `resume` + the number of bytes
 * the reader already holds continues from there instead of from part 0.
 */
function fallbackHead(id: string, baseUrl: string): Buffer {
  const fallback = { id, first: `${baseUrl}/z?id=${id}&part=0`, resume: `${baseUrl}/z?id=${id}&offset=` };
  return Buffer.from(`{"rangeFallback":${JSON.stringify(fallback)},`, "utf8");
}

/**
 * `head`, then the UTF-8 bytes of `text` (`size` of them). A text of ASCII only (its byte count is its length, as
 * for most answers, a page of source or log included) is the same bytes in Latin-1, which is a copy, not an encoding.
 */
function encodeText(text: string, size: number, head: Buffer): Buffer {
  const bytes = Buffer.allocUnsafe(head.length + size);
  head.copy(bytes, 0);
  const written = bytes.write(text, head.length, size === text.length ? "latin1" : "utf8");
  // Never send memory allocUnsafe did not clear.
  if (written !== size) throw new Error(`an answer encoded to ${written} bytes, not ${size}`);
  return bytes;
}

/** A JSON answer that is not replayable (Init, which belongs to no capability base). */
export function sendPlainJson(res: http.ServerResponse, body: object): void {
  sendBytes(res, 200, JSON_CONTENT_TYPE, Buffer.from(JSON.stringify(body), "utf8"));
}
