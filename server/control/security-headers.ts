// Response headers every control-plane answer carries: a strict CSP (no inline script), no framing,
// no MIME sniffing, no referrer, an isolated browsing context. No CORS header is ever set.
import type Koa from "koa";

export const CONTROL_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "Content-Security-Policy": CONTROL_CSP,
  "X-Frame-Options": "DENY",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "Cross-Origin-Opener-Policy": "same-origin",
  "Cross-Origin-Resource-Policy": "same-origin",
  "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=(), usb=()",
};

export function createSecurityHeaders(): Koa.Middleware {
  return async function securityHeaders(ctx, next) {
    ctx.set(SECURITY_HEADERS);
    if (ctx.path === "/api" || ctx.path.startsWith("/api/")) ctx.set("Cache-Control", "no-store");
    await next();
  };
}
