// Operator login for the UI: POST /api/login sets the session cookie, /api/logout ends it,
// /api/whoami tells the UI who it is, /api/login-info says where the token lives (no secret).
import Router from "@koa/router";
import type { FailureBackoff } from "../failure-backoff.js";
import { failAuthentication } from "./auth-backoff.js";
import { ControlError, ControlErrorCode } from "./errors.js";
import { readJsonBody } from "./json-body.js";
import { LOGIN_COOKIE, LOGIN_SESSION_TTL_MS, type LoginSessions } from "./login-sessions.js";
import type { OperatorAuth } from "./operator-auth.js";
import type { OperatorCredential } from "./operator-token.js";
import { loginBody } from "./schemas.js";
import { parseInput } from "./validate.js";

/** Routes that answer without operator authentication (still Host- and Origin-guarded). */
export const PUBLIC_API_PATHS: ReadonlySet<string> = new Set([
  "/api/health",
  "/api/login-info",
  "/api/login",
  "/api/logout",
  "/api/whoami",
]);

export interface AuthRoutesOptions {
  credential: OperatorCredential;
  sessions: LoginSessions;
  /** Shared with bearer authentication: a wrong login and a wrong bearer count alike. */
  backoff: FailureBackoff;
  /** The command that prints the token here, as the operator types it. */
  showTokenCommand: string;
}

export interface LoginInfo {
  /** env: URLBRIDGE_OPERATOR_TOKEN; file: generated into the state directory. */
  source: OperatorCredential["source"];
  file: string | null;
  /** The command that prints the token on the bridge's machine, ready to paste (docker compose exec, npx, ...). */
  showTokenCommand: string;
}

/** Public, so the UI can ask at start-up without a failing request: it reveals only whether *this* caller is logged in. */
export interface WhoAmI {
  authenticated: boolean;
  via: OperatorAuth["via"] | null;
  expiresAt: number | null;
}

const COOKIE_OPTIONS = { httpOnly: true, sameSite: "strict", path: "/", secure: false, overwrite: true } as const;

export function createAuthRouter(options: AuthRoutesOptions): Router {
  const { credential, sessions, backoff } = options;
  const router = new Router({ prefix: "/api" });

  router.get("/login-info", (ctx) => {
    const info: LoginInfo = {
      source: credential.source,
      file: credential.file ?? null,
      showTokenCommand: options.showTokenCommand,
    };
    ctx.body = info;
  });

  router.post("/login", async (ctx) => {
    const { token } = parseInput(loginBody, await readJsonBody(ctx));
    // Checked before any backoff: the right token logs in at once, however many wrong ones came before.
    if (!credential.matches(token)) {
      const wrong = new ControlError(
        ControlErrorCode.invalidToken,
        `That is not the operator token; print it with \`${options.showTokenCommand}\`.`,
      );
      throw await failAuthentication(backoff, ctx, wrong);
    }
    sessions.revoke(ctx.cookies.get(LOGIN_COOKIE));
    const session = sessions.create();
    ctx.cookies.set(LOGIN_COOKIE, session.id, { ...COOKIE_OPTIONS, maxAge: LOGIN_SESSION_TTL_MS });
    const body: WhoAmI = { authenticated: true, via: "cookie", expiresAt: session.expiresAt };
    ctx.body = body;
  });

  router.post("/logout", (ctx) => {
    sessions.revoke(ctx.cookies.get(LOGIN_COOKIE));
    ctx.cookies.set(LOGIN_COOKIE, null, COOKIE_OPTIONS);
    ctx.status = 204;
  });

  router.get("/whoami", (ctx) => {
    const auth = ctx.state.operator as OperatorAuth | undefined;
    const body: WhoAmI = {
      authenticated: auth !== undefined,
      via: auth?.via ?? null,
      expiresAt: auth?.via === "cookie" ? auth.expiresAt : null,
    };
    ctx.body = body;
  });

  return router;
}
