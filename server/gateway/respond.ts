// Writes data-plane answers straight to node:http: compact JSON kept as a range-replay snapshot, with a
// small rangeFallback object at the front when the body is larger than one range part.
import type http from "node:http";
import type { SessionState } from "../kernel/tool/session-state.js";
import { RANGE_PART_BYTES } from "../url-grammar/range-replay.js";

export const OPAQUE_NOT_FOUND = '{"ok":false,"errorCode":"not_found"}';
const OPAQUE_NOT_FOUND_BYTES = Buffer.from(OPAQUE_NOT_FOUND, "utf8");

export const JSON_CONTENT_TYPE = "application/json; charset=utf-8";
export const TEXT_CONTENT_TYPE = "text/plain; charset=utf-8";

/** Headers every agent answer carries; capability URLs must not leak to third parties through Referer. */
function agentHeaders(contentType: string, length: number): Record<string, string | number> {
  return {
    "Content-Type": contentType,
    "Content-Length": length,
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
  };
}

/** Ends the response with these bytes (Node drops the body itself for HEAD). */
export function sendBytes(res: http.ServerResponse, status: number, contentType: string, bytes: Buffer): void {
  res.writeHead(status, agentHeaders(contentType, bytes.length));
  res.end(bytes);
}

export function sendOpaqueNotFound(res: http.ServerResponse): void {
  sendBytes(res, 404, JSON_CONTENT_TYPE, OPAQUE_NOT_FOUND_BYTES);
}

export function sendMethodNotAllowed(res: http.ServerResponse): void {
  res.writeHead(405, { Allow: "GET", "Content-Length": 0, "Cache-Control": "no-store" });
  res.end();
}

/**
 * Serializes a JSON answer for the call's session: the fallback URL in front of a large body uses `baseUrl`,
 * the capability base the call arrived on. The bytes are what gets sent and what /z replays.
 */
export function serializeAgentJson(state: SessionState, body: object, baseUrl: string): { id: string; bytes: Buffer } {
  let json = JSON.stringify(body);
  const id = state.snapshots.newId();
  // json.length counts UTF-16 units, never more than the UTF-8 bytes: a cheap first test.
  if (json.length > 2 && (json.length > RANGE_PART_BYTES || Buffer.byteLength(json, "utf8") > RANGE_PART_BYTES)) {
    // Splice the fallback in front of the already serialized body rather than serializing it twice.
    // `resume` + the number of bytes the reader already holds continues from there instead of from part 0.
    json = `{"rangeFallback":${JSON.stringify({ id, first: `${baseUrl}/z?id=${id}&part=0`, resume: `${baseUrl}/z?id=${id}&offset=` })},${json.slice(1)}`;
  }
  return { id, bytes: Buffer.from(json, "utf8") };
}

/** A JSON answer that is not replayable (Init, which belongs to no capability base). */
export function sendPlainJson(res: http.ServerResponse, body: object): void {
  sendBytes(res, 200, JSON_CONTENT_TYPE, Buffer.from(JSON.stringify(body), "utf8"));
}
