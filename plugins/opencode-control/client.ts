// The plugin's one HTTP client for `opencode serve`: loopback origin only, no connection until first use, Basic
// auth sent only after an unauthenticated probe found an OpenCode-shaped server, and every later call pinned to
// the instance first identified (fails closed, for the rest of the process, when another one answers).
import { createHash } from "node:crypto";
import { ErrorCode, ToolError } from "../../server/errors.js";
import type { PluginConnection, PluginStatus } from "../../server/plugins/definition.js";
import type { OpenCodeSettings } from "./settings.js";

/** The unauthenticated probe: short, and tried twice, since a starting OpenCode can leave the first one hanging. */
export const PROBE_TIMEOUT_MS = 2_500;
export const REQUEST_TIMEOUT_MS = 10_000;
/** A call re-identifies the instance when the last identification is older than this. */
const REVERIFY_AFTER_MS = 1_000;
/** status() (the UI, /k listings) reuses an answer this young rather than probing again. */
const STATUS_CACHE_MS = 5_000;

export type ConnectionState = "ready" | "not-running" | "needs-auth" | "instance-changed" | "error";

export interface ConnectionReport {
  state: ConnectionState;
  detail: string;
  connection: PluginConnection;
}

/** A request's fate: answered (any status), never reached the server, or sent with its outcome unknown. */
export type SendResult =
  | { kind: "answered"; status: number; body: unknown }
  | { kind: "unreached"; error: string }
  | { kind: "uncertain"; error: string };

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  timeoutMs?: number;
}

export interface OpenCodeClient {
  /** Probes (bounded) and reports; never throws. `fresh` skips the status cache. */
  report(fresh?: boolean): Promise<ConnectionReport>;
  status(): Promise<PluginStatus>;
  /** Identifies the instance (when due) and sends; throws the matching ToolError when the instance is not usable. */
  send(method: string, route: string, options?: RequestOptions): Promise<SendResult>;
  /** send() that must be answered with 2xx: anything else throws a ToolError naming what happened. */
  json<T>(method: string, route: string, options?: RequestOptions): Promise<T>;
}

interface Identity {
  fingerprint: string;
  auth: "none" | "basic";
  version: string;
}

function errorCodeOf(error: unknown): string {
  const cause = (error as { cause?: { code?: string } } | undefined)?.cause;
  if (cause?.code) return cause.code;
  if ((error as Error | undefined)?.name === "TimeoutError" || (error as Error | undefined)?.name === "AbortError")
    return "TIMEOUT";
  return (error as { code?: string } | undefined)?.code ?? "ERROR";
}

export function createOpenCodeClient(settings: OpenCodeSettings): OpenCodeClient {
  const origin = settings.url;
  const authorization = settings.password
    ? `Basic ${Buffer.from(`${settings.username}:${settings.password}`).toString("base64")}`
    : undefined;
  let pinned: Identity | undefined;
  let changedDetail: string | undefined;
  let last: ConnectionReport | undefined;
  let verifiedAt = 0;
  let probing: Promise<ConnectionReport> | undefined;

  const connection = (extra: Partial<PluginConnection> = {}): PluginConnection => ({
    url: origin,
    credentials: authorization ? "configured" : "missing",
    ...(pinned ? { auth: pinned.auth, version: pinned.version, instance: pinned.fingerprint } : {}),
    ...extra,
    checkedAt: Date.now(),
  });
  const made = (state: ConnectionState, detail: string, extra: Partial<PluginConnection> = {}): ConnectionReport => ({
    state,
    detail,
    connection: connection(extra),
  });

  async function raw(method: string, route: string, options: RequestOptions, withAuth: boolean): Promise<SendResult> {
    const url = new URL(route, origin);
    for (const [k, v] of Object.entries(options.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const headers: Record<string, string> = { accept: "application/json" };
    if (withAuth && authorization) headers.authorization = authorization;
    if (options.body !== undefined) headers["content-type"] = "application/json";
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        signal: AbortSignal.timeout(options.timeoutMs ?? REQUEST_TIMEOUT_MS),
        redirect: "manual",
      });
    } catch (error) {
      const code = errorCodeOf(error);
      // Refused or unresolvable: nothing reached the server. A timeout or a reset after sending: unknown.
      if (code === "ECONNREFUSED" || code === "ENOTFOUND" || code === "EADDRNOTAVAIL" || code === "EHOSTUNREACH")
        return { kind: "unreached", error: code };
      return { kind: "uncertain", error: code };
    }
    let text: string;
    try {
      text = await res.text();
    } catch (error) {
      return { kind: "uncertain", error: errorCodeOf(error) };
    }
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      // Not JSON: kept as text for the error message.
    }
    return {
      kind: "answered",
      status: res.status,
      body,
      ...(res.status === 401 ? { challenge: res.headers.get("www-authenticate") ?? "" } : {}),
    } as SendResult;
  }

  /** Who answers at the origin, before any credential is sent; then, authenticated, which instance it is. */
  async function identify(): Promise<ConnectionReport> {
    if (changedDetail) return made("instance-changed", changedDetail);
    let probe = await raw("GET", "/global/health", { timeoutMs: PROBE_TIMEOUT_MS }, false);
    if (probe.kind === "uncertain") probe = await raw("GET", "/global/health", { timeoutMs: PROBE_TIMEOUT_MS }, false);
    if (probe.kind !== "answered")
      return made(
        "not-running",
        `Nothing answers at ${origin} (${probe.error}). Start \`opencode serve --hostname 127.0.0.1 --port <port>\` or set URLBRIDGE_OPENCODE_URL.`,
      );
    let auth: "none" | "basic";
    const challenge = (probe as { challenge?: string }).challenge ?? "";
    const health = probe.body as { healthy?: unknown; version?: unknown } | undefined;
    if (probe.status === 401 && /^basic\b/i.test(challenge)) auth = "basic";
    else if (probe.status === 200 && health?.healthy === true && typeof health.version === "string") auth = "none";
    else
      return made(
        "error",
        `${origin} answered /global/health with HTTP ${probe.status}, not as OpenCode does; no credentials were sent. Check URLBRIDGE_OPENCODE_URL.`,
      );
    if (auth === "basic" && !authorization)
      return made("needs-auth", "OpenCode asks for its server password and URLBRIDGE_OPENCODE_PASSWORD is not set.", {
        auth,
      });
    // /path makes OpenCode boot its default instance on first use, which takes seconds on a fresh server.
    const [checked, paths] = await Promise.all([
      raw("GET", "/global/health", { timeoutMs: REQUEST_TIMEOUT_MS }, true),
      raw("GET", "/path", { timeoutMs: REQUEST_TIMEOUT_MS }, true),
    ]);
    if (checked.kind !== "answered" || paths.kind !== "answered")
      return made("not-running", `OpenCode at ${origin} stopped answering while it was identified; try again.`, {
        auth,
      });
    if (checked.status === 401 || paths.status === 401)
      return made(
        "needs-auth",
        "OpenCode refused URLBRIDGE_OPENCODE_PASSWORD (HTTP 401). The operator sets it to OpenCode's OPENCODE_SERVER_PASSWORD.",
        { auth },
      );
    const version = (checked.body as { version?: unknown } | undefined)?.version;
    const where = paths.body as { home?: unknown; state?: unknown; config?: unknown } | undefined;
    if (
      checked.status !== 200 ||
      paths.status !== 200 ||
      typeof version !== "string" ||
      typeof where?.state !== "string"
    ) {
      return made(
        "error",
        `${origin} does not answer /global/health and /path as OpenCode does (HTTP ${checked.status}, ${paths.status}).`,
        { auth },
      );
    }
    const fingerprint = createHash("sha256")
      .update(JSON.stringify([auth, version, where.home, where.state, where.config]))
      .digest("hex")
      .slice(0, 12);
    if (pinned && pinned.fingerprint !== fingerprint) {
      changedDetail = `Another OpenCode instance answers at ${origin} (instance ${fingerprint}, version ${version}) than the one pinned at first contact (${pinned.fingerprint}). Every call is refused until urlbridge restarts; check what runs on that port.`;
      return made("instance-changed", changedDetail, { auth, version, instance: fingerprint });
    }
    pinned ??= { fingerprint, auth, version };
    verifiedAt = Date.now();
    return made(
      "ready",
      `OpenCode ${version} at ${origin}${auth === "basic" ? ", authenticated" : ", no authentication"}.`,
    );
  }

  function identifyOnce(): Promise<ConnectionReport> {
    probing ??= identify()
      .then((report) => (last = report))
      .finally(() => (probing = undefined));
    return probing;
  }

  async function ensureReady(): Promise<void> {
    const fresh = last?.state === "ready" && Date.now() - verifiedAt < REVERIFY_AFTER_MS && !changedDetail;
    const report = fresh ? last! : await identifyOnce();
    if (report.state === "ready") return;
    const detail = { state: report.state, url: origin };
    if (report.state === "not-running")
      throw new ToolError(ErrorCode.opencodeUnavailable, report.detail, { detail, agentAction: "wait_and_retry" });
    if (report.state === "needs-auth")
      throw new ToolError(ErrorCode.opencodeNeedsAuth, report.detail, { detail, agentAction: "stop" });
    if (report.state === "instance-changed")
      throw new ToolError(ErrorCode.opencodeInstanceChanged, report.detail, { detail, agentAction: "stop" });
    throw new ToolError(ErrorCode.opencodeUnavailable, report.detail, { detail, agentAction: "stop" });
  }

  async function send(method: string, route: string, options: RequestOptions = {}): Promise<SendResult> {
    await ensureReady();
    const result = await raw(method, route, options, true);
    // A 401 after identification: the password changed or another server took the port; identify again next time.
    if (result.kind === "answered" && result.status === 401) verifiedAt = 0;
    return result;
  }

  return {
    async report(fresh = false) {
      if (!fresh && last && Date.now() - last.connection.checkedAt! < STATUS_CACHE_MS) return last;
      return identifyOnce();
    },
    async status() {
      const report = await this.report();
      return { state: report.state, detail: report.detail, connection: report.connection };
    },
    send,
    async json<T>(method: string, route: string, options: RequestOptions = {}): Promise<T> {
      const result = await send(method, route, options);
      if (result.kind !== "answered") {
        throw new ToolError(
          ErrorCode.opencodeUnavailable,
          `OpenCode did not answer ${method} ${route} (${result.error}); try again.`,
          { detail: { route, error: result.error }, agentAction: "wait_and_retry" },
        );
      }
      if (result.status === 404)
        throw new ToolError(
          ErrorCode.opencodeNotFound,
          `OpenCode has no ${route.split("/").slice(0, 3).join("/")}… here (HTTP 404).`,
          { detail: { route } },
        );
      if (result.status === 401)
        throw new ToolError(
          ErrorCode.opencodeNeedsAuth,
          "OpenCode refused the server password (HTTP 401); the operator checks URLBRIDGE_OPENCODE_PASSWORD.",
          { agentAction: "stop" },
        );
      if (result.status < 200 || result.status > 299) {
        throw new ToolError(
          ErrorCode.opencodeFailed,
          `OpenCode answered ${method} ${route} with HTTP ${result.status}: ${summarise(result.body)}`,
          { detail: { route, status: result.status } },
        );
      }
      return result.body as T;
    },
  };
}

/** A short, credential-free rendering of an error body for a hint. */
function summarise(body: unknown): string {
  const text = typeof body === "string" ? body : JSON.stringify(body ?? "");
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}
