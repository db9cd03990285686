// Writes data-plane answers straight to node:http: compact JSON kept as a range-replay snapshot, with a
// small rangeFallback object at the front when the body is larger than one range part.
import type http from "node:http";
import type { SessionState } from "../kernel/tool/session-state.js";
import { RANGE_PART_BYTES } from "../url-grammar/range-replay.js";
import { JSON_CONTENT_TYPE, sendBytes } from "../edge/http-answer.js";

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
 * the capability base the call arrived on. The bytes are what gets sent and what /z replays.
 */
export function serializeAgentJson(state: SessionState, body: object, baseUrl: string): { id: string; bytes: Buffer } {
  const json = JSON.stringify(body);
  const id = state.snapshots.newId();
  // json.length counts UTF-16 units, never more than the UTF-8 bytes: a cheap first test.
  if (json.length > 2 && (json.length > RANGE_PART_BYTES || Buffer.byteLength(json, "utf8") > RANGE_PART_BYTES)) {
    // Splice the fallback in front of the already serialized body rather than serializing it twice.
    // `resume` + the number of bytes the reader already holds continues from there instead of from part 0.
    const fallback = `{"rangeFallback":${JSON.stringify({ id, first: `${baseUrl}/z?id=${id}&part=0`, resume: `${baseUrl}/z?id=${id}&offset=` })},`;
    // Spliced as bytes: a string spliced in front of a 128 KiB body is flattened again before encoding, which
    // cost a page of a large file ~0.25 ms more than encoding it (issue 34's read-through profile).
    const bytes = Buffer.from(json, "utf8");
    return { id, bytes: Buffer.concat([Buffer.from(fallback, "utf8"), bytes.subarray(1)]) };
  }
  return { id, bytes: Buffer.from(json, "utf8") };
}

/** A JSON answer that is not replayable (Init, which belongs to no capability base). */
export function sendPlainJson(res: http.ServerResponse, body: object): void {
  sendBytes(res, 200, JSON_CONTENT_TYPE, Buffer.from(JSON.stringify(body), "utf8"));
}
