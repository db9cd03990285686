// The data plane: resolves a capability from the URL path, routes to a tool or gateway route, and answers
// with JSON an agent can act on. It never serves /api or the UI; anything unrecognised is an opaque 404.
// A node:http listener served through a Koa shell (koa-shell.ts, ctx.respond = false): it parses the raw target
// and writes every byte itself; the pass-through costs about what a bare listener does (docs/PERFORMANCE.md).
import type http from "node:http";
import { ErrorCode, ToolError, toFailure, type ToolFailure } from "../errors.js";
import { assertToolEnabled, isToolEnabled, mutationEnabled } from "../kernel/tool/permissions.js";
import { isPromise, type MaybePromise, type RunOutcome, type ToolRunner } from "../kernel/tool/runner.js";
import type { SessionState, SessionStates } from "../kernel/tool/session-state.js";
import type { AnyToolDefinition, CapabilityBase, ExactUrls, ToolContext } from "../kernel/tool/definition.js";
import type { Logger } from "../log.js";
import type { PluginHost } from "../plugins/host.js";
import type { Store } from "../store/index.js";
import type { CapabilityLookup } from "../store/sessions.js";
import { bindQuery } from "../url-grammar/bind.js";
import { MAX_REQUEST_TARGET_BYTES } from "../url-grammar/limits.js";
import { decodePercent } from "../url-grammar/percent.js";
import { buildUrl, editRequestUrl, parseRequestUrl, splitTarget, type RequestUrl } from "../url-grammar/request-url.js";
import { createActivityRecorder, redactParams } from "./activity-recorder.js";
import { answerPluginsRoute, manifestOf } from "./gateway-routes.js";
import { buildInitContract } from "./init-contract.js";
import { serveRange } from "./range-route.js";
import { JSON_CONTENT_TYPE, sendBytes, sendMethodNotAllowed, sendOpaqueNotFound, sendPlainJson, serializeAgentJson, TEXT_CONTENT_TYPE } from "./respond.js";
import { createRequestSource } from "./request-source.js";
import { createRouteTable, type RouteMatch } from "./route-table.js";
import { createUnknownTokenThrottle } from "./unknown-token-throttle.js";

export interface DataPlaneOptions {
  store: Store;
  states: SessionStates;
  tools: AnyToolDefinition[];
  runners: { read: ToolRunner; mutation?: ToolRunner };
  plugins: PluginHost;
  publicOrigin: () => string;
  log: Logger;
  signal: AbortSignal;
  /** Peers whose cf-connecting-ip is believed for the unknown-token throttle (URLBRIDGE_TRUSTED_PROXIES). */
  trustedProxies?: readonly string[];
  /** false: every unknown token gets its opaque 404 at once (URLBRIDGE_UNKNOWN_TOKEN_THROTTLE=0). */
  unknownTokenThrottle?: boolean;
  /** config.agentFallback: who the file tools' new files belong to when the bridge is root (ProjectScope.agentFallback). */
  agentFallback?: { uid: number; gid: number };
}

const TOKEN = /^[A-Za-z0-9]{8}$/;
const INIT_PATH = /^\/v0\/(?:init|bootstrap)\/([^/]*)\/?$/;
const CAP_PATH = /^\/v0\/([^/]+)(?:\/([^/]*))?\/?$/;

interface Authenticated {
  cap: CapabilityLookup;
  base: CapabilityBase;
  tokens: { r: string; m: string | undefined };
}

function baseOf(kind: CapabilityLookup["kind"]): CapabilityBase | undefined {
  return kind === "read" ? "r" : kind === "mutation" ? "m" : undefined;
}

export function createDataPlane(options: DataPlaneOptions): http.RequestListener {
  const { store, states, log } = options;
  const table = createRouteTable(options.tools);
  const record = createActivityRecorder(store.activity);
  const sourceOf = createRequestSource(options.trustedProxies ?? []);
  const unknownTokens = options.unknownTokenThrottle === false ? { answer: (res: http.ServerResponse) => sendOpaqueNotFound(res) } : createUnknownTokenThrottle(log);

  function handleRequest(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> | void {
    if (req.method !== "GET" && req.method !== "HEAD") return sendMethodNotAllowed(res);
    // Printable ASCII only: Node's parser refuses other bytes, and client-error.ts re-encodes a GET that had them.
    const rawTarget = req.url ?? "/";
    const { path: rawPath, rawQuery } = splitTarget(rawTarget);
    const pathname = decodePercent(rawPath);

    const init = INIT_PATH.exec(pathname);
    if (init) return handleInit(req, res, init[1] ?? "");
    const capMatch = CAP_PATH.exec(pathname);
    if (!capMatch || capMatch[1] === "init" || capMatch[1] === "bootstrap") return sendOpaqueNotFound(res);
    const auth = authenticate(capMatch[1]!);
    if (!auth) return unknownTokens.answer(res, sourceOf(req));
    if (req.method === "HEAD") return sendOpaqueNotFound(res);
    return handleCall(res, auth, capMatch[2] ?? "", rawTarget, rawQuery);
  }

  // Tool failures never get here (handleCall answers them); this is a bug or a broken store, so the
  // operator gets the stack and the agent a plain retryable 500.
  function answerUnexpected(res: http.ServerResponse, error: unknown): void {
    log.error("data plane request failed", { error: error instanceof Error ? error.stack : String(error) });
    if (res.headersSent) {
      res.destroy();
      return;
    }
    sendBytes(res, 500, JSON_CONTENT_TYPE, Buffer.from(JSON.stringify(toFailure(error)), "utf8"));
  }

  // Valid read/mutation tokens are cached until any project, session or capability changes (store.scope);
  // unknown, malformed and wrong-kind tokens always take the same database path.
  const authCache = new Map<string, Authenticated>();
  let authCacheScope = -1;

  function authenticate(token: string): Authenticated | undefined {
    if (authCacheScope !== store.scope.value) {
      authCache.clear();
      authCacheScope = store.scope.value;
    }
    const cached = authCache.get(token);
    if (cached) return cached;
    // Same query for every shape of token so that timing does not tell a malformed token from an unknown one.
    const cap = store.sessions.lookup(TOKEN.test(token) ? token : "________");
    if (!cap) return undefined;
    const base = baseOf(cap.kind);
    if (!base) return undefined;
    const caps = store.sessions.capabilitiesFor(cap.sessionId, cap.generation);
    if (!caps.read) return undefined;
    const auth: Authenticated = { cap, base, tokens: { r: caps.read, m: caps.mutation } };
    authCache.set(token, auth);
    return auth;
  }

  function handleInit(req: http.IncomingMessage, res: http.ServerResponse, token: string): void {
    const started = Date.now();
    const cap = store.sessions.lookup(TOKEN.test(token) ? token : "________");
    if (!cap || cap.kind !== "init") return unknownTokens.answer(res, sourceOf(req));
    if (req.method === "HEAD") return sendOpaqueNotFound(res);
    const caps = store.sessions.capabilitiesFor(cap.sessionId, cap.generation);
    const origin = options.publicOrigin();
    const contract = buildInitContract({
      project: { id: cap.projectId, name: cap.projectName, root: cap.root, permissions: cap.permissions, ...(options.agentFallback ? { agentFallback: options.agentFallback } : {}) },
      readBase: `${origin}/v0/${caps.read}`,
      mutationBase: mutationEnabled(cap.permissions) && caps.mutation ? `${origin}/v0/${caps.mutation}` : undefined,
      tools: table.tools.filter((t) => isToolEnabled(t, cap.permissions)),
      pluginsAvailable: options.plugins.plugins().length > 0,
    });
    sendPlainJson(res, contract);
    record({
      sessionId: cap.sessionId,
      generation: cap.generation,
      route: "init",
      tool: null,
      ok: true,
      errorCode: null,
      httpStatus: 200,
      startedAt: started,
      params: null,
    });
  }

  /** What finishing a call needs to know about it, whichever way its tool answered. */
  interface Call {
    res: http.ServerResponse;
    auth: Authenticated;
    route: string;
    url: RequestUrl;
    state: SessionState;
    baseUrl: (b: CapabilityBase) => string;
    startedAt: number;
    toolId: string | null;
  }

  function handleCall(res: http.ServerResponse, auth: Authenticated, route: string, rawTarget: string, rawQuery: string): Promise<void> | void {
    const startedAt = Date.now();
    const { cap } = auth;
    const origin = options.publicOrigin();
    const baseUrl = (b: CapabilityBase) => `${origin}/v0/${b === "r" ? auth.tokens.r : auth.tokens.m}`;
    const url = parseRequestUrl(origin, `/v0/${auth.base === "r" ? auth.tokens.r : auth.tokens.m}`, route, rawQuery);
    const state = states.get(cap.sessionId, cap.generation);
    const call: Call = { res, auth, route, url, state, baseUrl, startedAt, toolId: null };
    let pending: MaybePromise<RunOutcome>;
    try {
      if (Buffer.byteLength(rawTarget, "utf8") > MAX_REQUEST_TARGET_BYTES) {
        throw new ToolError(ErrorCode.requestTargetTooLong, `The URL is longer than ${MAX_REQUEST_TARGET_BYTES} bytes. Stage large content with /s in ~1 KiB chunks and pass blob=<id>&count=<n>.`, {
          detail: { bytes: Buffer.byteLength(rawTarget, "utf8"), limit: MAX_REQUEST_TARGET_BYTES },
          agentAction: "stage_content",
        });
      }
      const match = table.match(route);
      if (!match) throw unknownRoute(auth, url, route);
      if (match.kind === "gateway" && match.name === "range") {
        const text = serveRange(url, state, baseUrl(auth.base));
        sendBytes(res, 200, TEXT_CONTENT_TYPE, Buffer.from(text, "utf8"));
        record(callRecord(auth, "z", null, { ok: true }, startedAt, url));
        return;
      }
      pending = dispatch(match, auth, url, state, baseUrl);
      call.toolId = match.kind === "tool" ? match.tool.id : match.name;
    } catch (error) {
      return finishCall(call, { body: failureOf(error) });
    }
    if (isPromise(pending)) {
      return pending.then(
        (outcome) => finishCall(call, outcome),
        (error: unknown) => finishCall(call, { body: failureOf(error) }),
      );
    }
    finishCall(call, pending);
  }

  function failureOf(error: unknown): ToolFailure {
    if (!(error instanceof ToolError)) log.error("data plane request failed", { error: error instanceof Error ? error.stack : String(error) });
    return toFailure(error);
  }

  function finishCall(call: Call, outcome: RunOutcome): void {
    const { auth, state } = call;
    const { body } = outcome;
    const answer = serializeAgentJson(state, body, call.baseUrl(auth.base));
    sendBytes(call.res, 200, JSON_CONTENT_TYPE, answer.bytes);
    // Bookkeeping after the bytes are on their way: it still runs before this process reads the
    // agent's next request, so a /z for this answer always finds it.
    state.snapshots.add(answer.id, answer.bytes);
    record(callRecord(auth, call.route, call.toolId, body, call.startedAt, call.url, outcome));
  }

  function dispatch(
    match: RouteMatch,
    auth: Authenticated,
    url: RequestUrl,
    state: SessionState,
    baseUrl: (b: CapabilityBase) => string,
  ): MaybePromise<RunOutcome> {
    const { cap } = auth;
    if (match.kind === "gateway") {
      if (match.name === "manifest") return { body: manifestOf(table.tools, cap.permissions, baseUrl) };
      return answerPluginsRoute(options.plugins, url);
    }
    const tool = match.tool;
    assertToolEnabled(tool, cap.permissions);
    const wanted: CapabilityBase = tool.capability === "read" ? "r" : "m";
    if (wanted !== auth.base) {
      // /s?path= on the read base is a slip for /t (stat), not a staging call on the wrong base.
      if (auth.base === "r" && tool.route === "s" && url.query.segments.some((s) => s.key === "path" || s.key === "file")) {
        throw unknownRoute(auth, url, tool.route);
      }
      const token = wanted === "r" ? auth.tokens.r : auth.tokens.m;
      throw new ToolError(ErrorCode.wrongCapabilityBase, `/${tool.route} (${tool.id}) belongs on the ${wanted === "r" ? "read" : "mutation"} base. Fetch the repair URL.`, {
        detail: { tool: tool.id, expectedBase: wanted },
        repair: editRequestUrl(url, { basePath: `/v0/${token}`, route: tool.route }),
      });
    }
    const args = bindQuery<Record<string, unknown>>({ schema: tool.schema, binding: tool.url, url, example: tool.example });
    const urls: ExactUrls = {
      to: (base, route, params, raw) => buildUrl(url.origin, `/v0/${base === "r" ? auth.tokens.r : auth.tokens.m}`, route, params, raw),
      repair: (edit) => editRequestUrl(url, edit),
    };
    const ctx: ToolContext = {
      project: { id: cap.projectId, name: cap.projectName, root: cap.root, permissions: cap.permissions, ...(options.agentFallback ? { agentFallback: options.agentFallback } : {}) },
      session: { id: cap.sessionId, name: cap.sessionName, generation: cap.generation },
      state,
      urls,
      signal: options.signal,
    };
    const runner = tool.capability === "mutation" ? options.runners.mutation : options.runners.read;
    if (!runner) throw new ToolError(ErrorCode.toolNotEnabled, `${tool.id} is not available in this build.`, { retryable: false });
    return runner(tool, args, ctx);
  }

  function unknownRoute(auth: Authenticated, url: RequestUrl, route: string): ToolError {
    // A common slip: /s (stage, mutation base) used for stat on the read base.
    if (route === "s" && auth.base === "r" && url.query.segments.some((s) => s.key === "path" || s.key === "file")) {
      return new ToolError(ErrorCode.unknownRoute, "/s is staging on the mutation base; path metadata is /t (stat). Fetch the repair URL.", {
        detail: { route },
        repair: editRequestUrl(url, { route: "t" }),
      });
    }
    return new ToolError(ErrorCode.unknownRoute, `No route "/${route}" on this base. Routes: ${table.routesFor(auth.base).join(", ")}.`, {
      detail: { route, routes: table.routesFor(auth.base) },
    });
  }

  function callRecord(
    auth: Authenticated,
    route: string,
    tool: string | null,
    body: { ok: boolean; errorCode?: string },
    startedAt: number,
    url: RequestUrl,
    outcome?: RunOutcome,
  ) {
    return {
      sessionId: auth.cap.sessionId,
      generation: auth.cap.generation,
      route: `/${route}`,
      tool,
      ok: body.ok,
      errorCode: body.ok ? null : ((body as ToolFailure).errorCode ?? null),
      httpStatus: 200,
      startedAt,
      callId: outcome?.callId,
      dedupe: outcome?.dedupe,
      params: redactParams(url.query.segments, url.query.raw),
    };
  }

  return (req, res) => {
    try {
      const pending = handleRequest(req, res);
      if (pending) pending.catch((error: unknown) => answerUnexpected(res, error));
    } catch (error) {
      answerUnexpected(res, error);
    }
  };
}
