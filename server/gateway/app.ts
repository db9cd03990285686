// The data plane: resolves a capability from the URL path, routes to a tool or gateway route, and answers
// with JSON an agent can act on. It never serves /api or the UI; anything unrecognised is an opaque 404.
import Koa from "koa";
import { z } from "zod";
import { ErrorCode, ToolError, toFailure, type ToolFailure } from "../errors.js";
import { assertToolEnabled, isToolEnabled, mutationEnabled } from "../kernel/permissions.js";
import type { RunOutcome, ToolRunner } from "../kernel/runner.js";
import type { SessionStates } from "../kernel/session-state.js";
import type { AnyToolDefinition, CapabilityBase, ExactUrls, ToolContext, ToolResult } from "../kernel/tool.js";
import type { Logger } from "../log.js";
import type { PluginHost } from "../plugins/host.js";
import type { Store } from "../store/index.js";
import type { CapabilityLookup } from "../store/sessions.js";
import { bindQuery } from "../transport/bind.js";
import { MAX_REQUEST_TARGET_BYTES } from "../transport/limits.js";
import { decodePercent } from "../transport/percent.js";
import { buildUrl, editRequestUrl, parseRequestUrl, splitTarget, type RequestUrl } from "../transport/request-url.js";
import { createActivityRecorder, redactParams } from "./activity-recorder.js";
import { buildInitContract } from "./init-contract.js";
import { serveRange } from "./range-route.js";
import { sendAgentJson, sendOpaqueNotFound, setAgentHeaders } from "./respond.js";
import { createRouteTable, type RouteMatch } from "./route-table.js";

export interface DataPlaneOptions {
  store: Store;
  states: SessionStates;
  tools: AnyToolDefinition[];
  runners: { read: ToolRunner; mutation?: ToolRunner };
  plugins: PluginHost;
  publicOrigin: () => string;
  log: Logger;
  signal: AbortSignal;
}

const TOKEN = /^[A-Za-z0-9]{8}$/;
const pluginQuerySchema = z.object({ plugin: z.string().min(1).max(64).optional() });
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

export function createDataPlaneApp(options: DataPlaneOptions): Koa {
  const { store, states, log } = options;
  const table = createRouteTable(options.tools);
  const record = createActivityRecorder(store.activity);
  const app = new Koa();
  app.proxy = false;
  app.silent = true;

  app.use(async (ctx) => {
    if (ctx.method !== "GET" && ctx.method !== "HEAD") {
      ctx.status = 405;
      ctx.set("Allow", "GET");
      return;
    }
    // Printable ASCII only: Node's parser refuses other bytes, and client-error.ts re-encodes a GET that had them.
    const rawTarget = ctx.req.url ?? "/";
    const { path: rawPath, rawQuery } = splitTarget(rawTarget);
    const pathname = decodePercent(rawPath);

    const init = INIT_PATH.exec(pathname);
    if (init) return handleInit(ctx, init[1] ?? "");
    const capMatch = CAP_PATH.exec(pathname);
    if (!capMatch || capMatch[1] === "init" || capMatch[1] === "bootstrap") return sendOpaqueNotFound(ctx);
    const auth = authenticate(capMatch[1]!);
    if (!auth || ctx.method === "HEAD") return sendOpaqueNotFound(ctx);
    return handleCall(ctx, auth, capMatch[2] ?? "", rawTarget, rawQuery);
  });

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

  function handleInit(ctx: Koa.Context, token: string): void {
    const started = Date.now();
    const cap = store.sessions.lookup(TOKEN.test(token) ? token : "________");
    if (!cap || cap.kind !== "init" || ctx.method === "HEAD") return sendOpaqueNotFound(ctx);
    const caps = store.sessions.capabilitiesFor(cap.sessionId, cap.generation);
    const origin = options.publicOrigin();
    const contract = buildInitContract({
      project: { id: cap.projectId, name: cap.projectName, root: cap.root, permissions: cap.permissions },
      readBase: `${origin}/v0/${caps.read}`,
      mutationBase: mutationEnabled(cap.permissions) && caps.mutation ? `${origin}/v0/${caps.mutation}` : undefined,
      tools: table.tools.filter((t) => isToolEnabled(t, cap.permissions)),
      pluginsAvailable: options.plugins.plugins().length > 0,
    });
    sendAgentJson(ctx, undefined, contract, undefined);
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

  async function handleCall(ctx: Koa.Context, auth: Authenticated, route: string, rawTarget: string, rawQuery: string): Promise<void> {
    const started = Date.now();
    const { cap } = auth;
    const origin = options.publicOrigin();
    const baseUrl = (b: CapabilityBase) => `${origin}/v0/${b === "r" ? auth.tokens.r : auth.tokens.m}`;
    const url = parseRequestUrl(origin, `/v0/${auth.base === "r" ? auth.tokens.r : auth.tokens.m}`, route, rawQuery);
    const state = states.get(cap.sessionId, cap.generation);
    let outcome: RunOutcome | undefined;
    let toolId: string | null = null;
    let body: object;
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
        ctx.status = 200;
        setAgentHeaders(ctx, "text/plain; charset=utf-8");
        ctx.body = text;
        record(callRecord(auth, "z", null, { ok: true }, started, url));
        return;
      }
      const result = await dispatch(match, auth, url, state, baseUrl);
      outcome = result;
      toolId = match.kind === "tool" ? match.tool.id : match.name;
      body = result.body;
    } catch (error) {
      if (!(error instanceof ToolError)) log.error("data plane request failed", { error: error instanceof Error ? error.stack : String(error) });
      body = toFailure(error);
    }
    sendAgentJson(ctx, state, body, baseUrl(auth.base));
    record(callRecord(auth, route, toolId, body as { ok: boolean; errorCode?: string }, started, url, outcome));
  }

  async function dispatch(
    match: RouteMatch,
    auth: Authenticated,
    url: RequestUrl,
    state: ReturnType<SessionStates["get"]>,
    baseUrl: (b: CapabilityBase) => string,
  ): Promise<RunOutcome> {
    const { cap } = auth;
    if (match.kind === "gateway") {
      if (match.name === "manifest") return { body: manifest(auth, baseUrl) };
      const { plugin } = bindQuery<{ plugin?: string }>({ schema: pluginQuerySchema, binding: {}, url });
      if (plugin === undefined) return { body: { ok: true, plugins: await options.plugins.summaries() } };
      const found = options.plugins.get(plugin);
      if (!found) {
        throw new ToolError(ErrorCode.unknownPlugin, `No plugin "${plugin}" is installed. /k lists the installed plugins.`, {
          detail: { plugin },
          repair: editRequestUrl(url, { drop: ["plugin"] }),
        });
      }
      return {
        body: {
          ok: true,
          plugin: found.id,
          status: await found.status(),
          tools: found.tools.map((t) => ({ id: t.id, capability: t.capability, description: t.description, params: Object.keys(t.schema.shape) })),
        },
      };
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
      project: { id: cap.projectId, name: cap.projectName, root: cap.root, permissions: cap.permissions },
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

  function manifest(auth: Authenticated, baseUrl: (b: CapabilityBase) => string): ToolResult {
    const tools = table.tools.filter((t) => isToolEnabled(t, auth.cap.permissions));
    return {
      ok: true,
      bases: { r: baseUrl("r"), ...(mutationEnabled(auth.cap.permissions) ? { m: baseUrl("m") } : {}) },
      tools: tools.map((t) => ({
        id: t.id,
        route: `/${t.route}`,
        base: t.capability === "read" ? "r" : "m",
        description: t.description,
        params: Object.keys(t.schema.shape),
        ...(t.url.rawField ? { raw: t.url.rawField } : {}),
        example: t.example,
      })),
      gateway: ["/z?last=1&part=0 (range replay)", "/k (plugins)", "/manifest"],
    };
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

  return app;
}
