// CSRF guard for browser (cookie) mutations. SameSite=Strict alone is not enough: every port on
// localhost is the same *site*, so another local web app could still post with the cookie.
// The request must prove it comes from this exact origin (scheme + host + port).
import type Koa from "koa";
import { ControlError, ControlErrorCode } from "./errors.js";

/**
 * Same-origin when the Origin header equals this request's own origin. Browsers send Origin on every
 * non-GET fetch; when it is absent we accept only `Sec-Fetch-Site: same-origin`. Referer is not used:
 * the UI sends none (Referrer-Policy: no-referrer). The Host header has already passed the allowlist.
 */
export function isSameOriginRequest(ctx: Koa.Context): boolean {
  const host = ctx.get("host").toLowerCase();
  const origin = ctx.get("origin").toLowerCase();
  if (origin) return origin === `http://${host}` || origin === `https://${host}`;
  return ctx.get("sec-fetch-site").toLowerCase() === "same-origin";
}

export function requireSameOrigin(ctx: Koa.Context): void {
  if (!isSameOriginRequest(ctx)) {
    throw new ControlError(
      ControlErrorCode.crossOrigin,
      "Browser requests that change state must come from the control UI's own origin; scripts should send Authorization: Bearer <operator token>.",
    );
  }
}
