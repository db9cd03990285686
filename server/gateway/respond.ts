// Serializes agent responses: compact JSON, kept as a range-replay snapshot, with a small rangeFallback
// object at the front when the body is larger than one range part.
import type Koa from "koa";
import type { SessionState } from "../kernel/session-state.js";
import { RANGE_PART_BYTES, ResponseSnapshots } from "../transport/range-replay.js";

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
  if (state && baseUrl) {
    const id = ResponseSnapshots.newId();
    if (Buffer.byteLength(json, "utf8") > RANGE_PART_BYTES) {
      json = JSON.stringify({ rangeFallback: { id, first: `${baseUrl}/z?id=${id}&part=0` }, ...body });
    }
    state.snapshots.add(id, Buffer.from(json, "utf8"));
  }
  ctx.status = 200;
  setAgentHeaders(ctx, "application/json; charset=utf-8");
  ctx.body = json;
}
