// DNS-rebinding guard: the control plane answers only when the Host header names loopback
// (localhost, 127.0.0.1, [::1], any port) or a name the operator listed in URLBRIDGE_ALLOWED_HOSTS.
import type Koa from "koa";
import { ControlError, ControlErrorCode } from "./errors.js";

export const LOOPBACK_HOSTNAMES: readonly string[] = ["localhost", "127.0.0.1", "[::1]"];

const HOST_HEADER = /^(\[[0-9a-f:.]+\]|[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?)(?::(\d{1,5}))?$/;

export interface ParsedHost {
  hostname: string;
  port: string | undefined;
}

/** Splits a Host header into name and port; undefined when it is not a plain host[:port]. */
export function parseHostHeader(value: string | undefined): ParsedHost | undefined {
  const match = HOST_HEADER.exec((value ?? "").trim().toLowerCase());
  if (!match) return undefined;
  return { hostname: match[1]!, port: match[2] };
}

/**
 * True when the Host header is loopback or matches a configured entry. An entry with a port
 * ("bridge.lan:8443") must match exactly; an entry without one accepts any port.
 */
export function isAllowedHost(header: string | undefined, allowedHosts: readonly string[]): boolean {
  const parsed = parseHostHeader(header);
  if (!parsed) return false;
  if (LOOPBACK_HOSTNAMES.includes(parsed.hostname)) return true;
  const full = parsed.port === undefined ? parsed.hostname : `${parsed.hostname}:${parsed.port}`;
  return allowedHosts.some((entry) =>
    entry.includes(":") && !entry.startsWith("[") ? entry === full : entry === parsed.hostname || entry === full,
  );
}

/** Rejects every control request whose Host header is not allowed, before any other work. */
export function createHostGuard(allowedHosts: readonly string[]): Koa.Middleware {
  const allowed = allowedHosts.map((h) => h.toLowerCase());
  return async function hostGuard(ctx, next) {
    if (!isAllowedHost(ctx.get("host"), allowed)) {
      throw new ControlError(
        ControlErrorCode.hostNotAllowed,
        "This Host name is not allowed on the control plane; use http://127.0.0.1:<port> or add the name to URLBRIDGE_ALLOWED_HOSTS.",
      );
    }
    await next();
  };
}
