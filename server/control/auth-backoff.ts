// Every failed operator authentication (a wrong bearer token or a wrong login) from one client address
// counts toward that address's backoff: its failure answers are held longer, never its right token.
// Behind Docker's port publish every browser shares one address, so a lockout would lock the operator out.
import type Koa from "koa";
import { createFailureBackoff, type FailureBackoff } from "../failure-backoff.js";
import { ControlError, ControlErrorCode } from "./errors.js";

/** Failures inside the window answered at once: typos and a stale script's first tries. */
export const AUTH_FREE_FAILURES = 5;
/** The first held failure waits this long, each further one twice as long, up to AUTH_MAX_DELAY_MS. */
export const AUTH_BASE_DELAY_MS = 100;
export const AUTH_MAX_DELAY_MS = 3200;
export const AUTH_FAILURE_WINDOW_MS = 10 * 60 * 1000;
/** Failure answers held at once, all addresses together: a flood cannot pin more sockets than this. */
export const AUTH_MAX_HELD = 32;
export const AUTH_MAX_SOURCES = 1024;
/** Retry-After sent when every hold slot is taken. */
const SATURATED_RETRY_AFTER_S = Math.ceil(AUTH_MAX_DELAY_MS / 1000);

export function createAuthBackoff(now?: () => number): FailureBackoff {
  return createFailureBackoff({
    freeFailures: AUTH_FREE_FAILURES,
    baseDelayMs: AUTH_BASE_DELAY_MS,
    maxDelayMs: AUTH_MAX_DELAY_MS,
    windowMs: AUTH_FAILURE_WINDOW_MS,
    maxHeld: AUTH_MAX_HELD,
    maxSources: AUTH_MAX_SOURCES,
    ...(now ? { now } : {}),
  });
}

/** The control plane trusts no forwarding header (app.proxy is off): the source is the TCP peer. */
export function authSource(ctx: Koa.Context): string {
  return ctx.socket.remoteAddress ?? "unknown";
}

/**
 * Counts a failed authentication, holds its answer for the backoff, then returns the error to throw:
 * `failure` itself, or 429 when the hold was due but every slot was taken (answered at once).
 */
export async function failAuthentication(
  backoff: FailureBackoff,
  ctx: Koa.Context,
  failure: ControlError,
): Promise<ControlError> {
  const verdict = await backoff.fail(authSource(ctx));
  if (!verdict.saturated) return failure;
  ctx.set("Retry-After", String(SATURATED_RETRY_AFTER_S));
  return new ControlError(
    ControlErrorCode.authBackoff,
    `Too many failed authentications are being answered right now; the right operator token is still accepted at once. Check the token (\`urlbridge token --show\`) and retry in ${SATURATED_RETRY_AFTER_S} s.`,
  );
}
