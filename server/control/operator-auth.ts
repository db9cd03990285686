// Who is calling the control API: a script with the operator token as a bearer, or a browser with
// the login cookie. A presented bearer must be right; it never falls back to the cookie. A wrong bearer
// counts toward the caller's backoff (auth-backoff.ts); a right one is accepted at once.
import type Koa from "koa";
import type { FailureBackoff } from "../failure-backoff.js";
import { failAuthentication } from "./auth-backoff.js";
import { ControlError, ControlErrorCode, controlMessage } from "./errors.js";
import { LOGIN_COOKIE, type LoginSessions } from "./login-sessions.js";
import type { OperatorCredential } from "./operator-token.js";

export type OperatorAuth = { via: "bearer" } | { via: "cookie"; expiresAt: number };

function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  return match?.[1];
}

export function unauthorized(): ControlError {
  return new ControlError(ControlErrorCode.unauthorized, controlMessage.unauthorized);
}

/**
 * Resolves the caller's credential; returns undefined when none is presented. A wrong bearer is answered
 * 401 after its backoff hold (or 429 when every hold slot is taken).
 */
export async function authenticateOperator(
  ctx: Koa.Context,
  credential: OperatorCredential,
  sessions: LoginSessions,
  backoff: FailureBackoff,
): Promise<OperatorAuth | undefined> {
  const authorization = ctx.get("authorization");
  if (authorization) {
    const token = bearerToken(authorization);
    if (!token || !credential.matches(token)) {
      const wrong = new ControlError(ControlErrorCode.unauthorized, controlMessage.wrongBearer);
      throw await failAuthentication(backoff, ctx, wrong);
    }
    return { via: "bearer" };
  }
  const session = sessions.lookup(ctx.cookies.get(LOGIN_COOKIE));
  return session ? { via: "cookie", expiresAt: session.expiresAt } : undefined;
}
