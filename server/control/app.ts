// The control plane: operator-only JSON API plus the built UI, behind the Host allowlist, operator
// auth (bearer or login cookie) and the same-origin rule; errors are {error:{code,message}} with a 4xx.
import fs from "node:fs";
import path from "node:path";
import type { RouterContext, default as Router } from "@koa/router";
import Koa from "koa";
import type { Logger } from "../log.js";
import { isStoreUnavailable, sqliteCode } from "../store/health.js";
import type { AgentLimitsStatus, SandboxReport } from "./api-types.js";
import type { ApiOptions } from "./api.js";
import { createAuthBackoff } from "./auth-backoff.js";
import { createAuthRouter, PUBLIC_API_PATHS } from "./auth-routes.js";
import { CONTROL_ERROR_STATUS, ControlError, ControlErrorCode, controlErrorBody, controlMessage } from "./errors.js";
import { createHostGuard } from "./host-guard.js";
import { createLoginSessions } from "./login-sessions.js";
import { authenticateOperator, unauthorized } from "./operator-auth.js";
import type { OperatorCredential } from "./operator-token.js";
import { requireSameOrigin } from "./same-origin.js";
import { createSecurityHeaders } from "./security-headers.js";

export interface ControlPlaneOptions extends ApiOptions {
  credential: OperatorCredential;
  /** How the operator prints the token on this machine (server/cli/invocation.ts), for the login page. */
  showTokenCommand?: string;
  log: Logger;
  /** Folder holding the built UI (dist/web). */
  webRoot: string;
  /** What the terminal sandbox enforces, shown by /api/health and the UI. */
  sandbox?: () => SandboxReport;
  /** The agent limits (OOM order, memory and growth budgets, file size), shown by /api/health and the UI. */
  agentLimits?: () => AgentLimitsStatus;
  /** The image's content hash (/api/health `buildId`); "source" when run from a checkout. */
  buildId?: string;
  /** Bounds /api/health reports as they are configured (interactive processes: pty). */
  limits?: () => Record<string, unknown>;
}

/** Retry-After of a state_store_unavailable answer: a lock held elsewhere or a full disk rarely clears faster. */
const STORE_RETRY_AFTER_S = 5;

export function createControlPlaneApp(options: ControlPlaneOptions): Koa {
  const app = new Koa();
  app.proxy = false;
  app.silent = true;
  const api = lazyApiRouter(options);
  const sessions = createLoginSessions(options.store.loginSessions, options.credential.loginBinding);
  const backoff = createAuthBackoff();
  const auth = createAuthRouter({
    credential: options.credential,
    sessions,
    backoff,
    showTokenCommand: options.showTokenCommand ?? "urlbridge token --show",
  });

  app.use(createSecurityHeaders());

  app.use(async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      if (error instanceof ControlError) {
        ctx.status = error.status;
        ctx.body = controlErrorBody(error.code, error.message);
        return;
      }
      // A store fault is not a bug: say what happened and that nothing changed (each write is one transaction).
      if (isStoreUnavailable(error)) {
        options.log.warn("control plane request refused: the state store cannot take writes", {
          code: sqliteCode(error),
        });
        ctx.status = CONTROL_ERROR_STATUS.state_store_unavailable;
        ctx.set("Retry-After", String(STORE_RETRY_AFTER_S));
        ctx.body = controlErrorBody(
          ControlErrorCode.stateStoreUnavailable,
          controlMessage.stateStoreUnavailable(sqliteCode(error) ?? "unknown"),
        );
        return;
      }
      options.log.error("control plane request failed", {
        error: error instanceof Error ? error.stack : String(error),
      });
      ctx.status = CONTROL_ERROR_STATUS.internal_error;
      ctx.body = controlErrorBody(ControlErrorCode.internalError, controlMessage.internalError);
    }
  });

  app.use(createHostGuard(options.config.allowedHosts));

  app.use(async function operatorGate(ctx, next) {
    if (!ctx.path.startsWith("/api/") && ctx.path !== "/api") return await nextAnswer(next);
    if (ctx.path === "/api/health") {
      // The bridge answers, so ok stays true; `degraded` says a part of it is failing (the activity log or the
      // journal cannot be written, e.g. the state disk is full or another process holds the database lock).
      const { degraded, activityLog, journal } = options.store.health();
      // Serialized here, as Koa would: Koa's check of an object body against the fetch classes loads undici
      // (~20 ms), which a start-up's first answer (the health probe) has no use for. Same bytes and headers; the
      // header is set as `ctx.type = "json"` sets it, without mime-types' tables (loaded on first lookup, see
      // scripts/vite.server.config.ts).
      ctx.set("Content-Type", "application/json; charset=utf-8");
      ctx.body = JSON.stringify({
        ok: true,
        version: options.version,
        buildId: options.buildId ?? "source",
        degraded,
        store: { activityLog, journal },
        ...(options.sandbox ? { sandbox: options.sandbox() } : {}),
        ...(options.agentLimits ? { agentLimits: options.agentLimits() } : {}),
        ...(options.limits ? { limits: options.limits() } : {}),
      });
      return;
    }
    const operator = await authenticateOperator(ctx, options.credential, sessions, backoff);
    // Bearer callers cannot be forged by a browser (no CORS preflight ever succeeds); everything else
    // that changes state, login and logout included, must come from the UI's own origin.
    if (ctx.method !== "GET" && ctx.method !== "HEAD" && operator?.via !== "bearer") requireSameOrigin(ctx);
    if (!operator && !PUBLIC_API_PATHS.has(ctx.path)) throw unauthorized();
    ctx.state.operator = operator;
    await next();
    if (ctx.status === 404 && ctx.body === undefined)
      throw new ControlError(ControlErrorCode.notFound, `No API route ${ctx.method} ${ctx.path}.`);
  });

  app.use(auth.routes());
  app.use(api);
  app.use(serveWeb(options.webRoot));
  return app;
}

/**
 * The operator API's routes (and allowed methods), their module and what only it imports loaded and built on the
 * first request that reaches them: a start's first answer is the health probe's, which needs none of it (issue 34
 * item 7). The same two middlewares in the same order as when they were built at start-up.
 */
function lazyApiRouter(options: ApiOptions) {
  let loading:
    Promise<{ routes: ReturnType<Router["routes"]>; allowed: ReturnType<Router["allowedMethods"]> }> | undefined;
  return async function operatorApi(ctx: RouterContext, next: Koa.Next) {
    loading ??= import("./api.js").then(({ createApiRouter }) => {
      const router = createApiRouter(options);
      return { routes: router.routes(), allowed: router.allowedMethods({ throw: false }) };
    });
    const api = await loading.catch((error: unknown) => {
      loading = undefined;
      throw error;
    });
    await api.routes(ctx, async () => {
      await api.allowed(ctx, next);
    });
  };
}

const MIME: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json; charset=utf-8",
  ".woff2": "font/woff2",
};

/** Hands the request on; Koa types what `next()` settles with as any, and no middleware here uses it. */
async function nextAnswer(next: Koa.Next): Promise<void> {
  await next();
}

/** Serves the built single-page UI; unknown non-API paths get index.html. */
function serveWeb(webRoot: string): Koa.Middleware {
  return async (ctx, next) => {
    if (ctx.method !== "GET" && ctx.method !== "HEAD") return await nextAnswer(next);
    if (ctx.path.startsWith("/api") || ctx.path.startsWith("/v0/")) return await nextAnswer(next);
    let decoded: string;
    try {
      decoded = decodeURIComponent(ctx.path);
    } catch {
      decoded = "/";
    }
    const rel = path.normalize(decoded).replace(/^(\.\.[/\\])+/, "");
    let file = path.join(webRoot, rel);
    if (!file.startsWith(webRoot) || !fs.existsSync(file) || fs.statSync(file).isDirectory())
      file = path.join(webRoot, "index.html");
    if (!fs.existsSync(file)) {
      ctx.status = 503;
      ctx.type = "text/plain";
      ctx.body = "The control UI is not built. Run `npm run build`.";
      return;
    }
    ctx.type = MIME[path.extname(file)] ?? "application/octet-stream";
    ctx.set("Cache-Control", file.endsWith("index.html") ? "no-store" : "public, max-age=31536000, immutable");
    ctx.body = fs.createReadStream(file);
  };
}
