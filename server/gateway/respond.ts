// Serializes agent responses: compact JSON, kept as a range-replay snapshot, with a small rangeFallback
// object at the front when the body is larger than one range part.
import type Koa from "koa";
import type { SessionState } from "../kernel/session-state.js";
import { RANGE_PART_BYTES } from "../transport/range-replay.js";

export const OPAQUE_NOT_FOUND = '{"ok":false,"errorCode":"not_found"}';

export function setAgentHeaders(ctx: Koa.Context, contentType: string): void {
  ctx.set("Content-Type", contentType);
  ctx.set("Cache-Control", "no-store");
  ctx.set("X-Content-Type-Options", "nosniff");
  // Capability URLs must not leak to third parties through the Referer header.
  ctx.set("Referrer-Policy", "no-referrer");
}

export function sendOpaqueNotFound(ctx: Koa.Context): void {
  ctx.status = 404;
  setAgentHeaders(ctx, "application/json; charset=utf-8");
  ctx.body = OPAQUE_NOT_FOUND;
}

/**
 * Sends a JSON body and snapshots it for /z. `baseUrl` is the capability base the call arrived on,
 * so the fallback URL works with the same capability.
 */
export function sendAgentJson(ctx: Koa.Context, state: SessionState | undefined, body: object, baseUrl: string | undefined): void {
  let json = JSON.stringify(body);
  let bytes: Buffer;
  if (state && baseUrl) {
    const id = state.snapshots.newId();
    // json.length counts UTF-16 units, never more than the UTF-8 bytes: a cheap first test.
    if (json.length > 2 && (json.length > RANGE_PART_BYTES || Buffer.byteLength(json, "utf8") > RANGE_PART_BYTES)) {
      // Splice the fallback in front of the already serialized body rather than serializing it twice.
      json = `{"rangeFallback":${JSON.stringify({ id, first: `${baseUrl}/z?id=${id}&part=0` })},${json.slice(1)}`;
    }
    bytes = Buffer.from(json, "utf8");
    state.snapshots.add(id, bytes);
  } else {
    bytes = Buffer.from(json, "utf8");
  }
  ctx.status = 200;
  setAgentHeaders(ctx, "application/json; charset=utf-8");
  // A Buffer body is written as is: the snapshot and the response share one encoding of the JSON.
  ctx.body = bytes;
}
