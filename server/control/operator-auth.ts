// Who is calling the control API: a script with the operator token as a bearer, or a browser with
// the login cookie. A presented bearer must be right; it never falls back to the cookie.
import type Koa from "koa";
import { ControlError } from "./errors.js";
import { LOGIN_COOKIE, type LoginSessions } from "./login-sessions.js";
import type { OperatorCredential } from "./operator-token.js";

export type OperatorAuth = { via: "bearer" } | { via: "cookie"; expiresAt: number };

function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  return match?.[1];
}

export function unauthorized(): ControlError {
  return new ControlError(401, "unauthorized", "Log in to the control UI, or send Authorization: Bearer <operator token>.");
}

/** Resolves the caller's credential; throws 401 for a wrong bearer, returns undefined when none is presented. */
export function authenticateOperator(
  ctx: Koa.Context,
  credential: OperatorCredential,
  sessions: LoginSessions,
): OperatorAuth | undefined {
  const authorization = ctx.get("authorization");
  if (authorization) {
    const token = bearerToken(authorization);
    if (!token || !credential.matches(token)) {
      throw new ControlError(401, "unauthorized", "The bearer token is not the operator token; print it with `urlbridge token --show`.");
    }
    return { via: "bearer" };
  }
  const session = sessions.lookup(ctx.cookies.get(LOGIN_COOKIE));
  return session ? { via: "cookie", expiresAt: session.expiresAt } : undefined;
}
