// Answers written straight to node:http by both edges (the URL gateway and MCP over HTTP): the agent headers,
// the opaque 404 every unknown path and token gets, and the 405.
import type http from "node:http";

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
