// The data plane: resolves a capability from the URL path and hands the call to the call dispatch (a tool through
// the kernel, or a gateway route), answering with JSON an agent can act on. It never serves /api or the UI;
// anything unrecognised is an opaque 404. Pieces: authenticate.ts, init-route.ts, call-dispatch.ts, finish-call.ts;
// POST belongs to MCP alone (its two exact paths, server/mcp/route.ts; the handler in server/mcp/http.ts).
// A node:http listener served through a Koa shell (koa-shell.ts, ctx.respond = false): it parses the raw target
// and writes every byte itself; the pass-through costs about what a bare listener does (docs/PERFORMANCE.md).
import type http from "node:http";
import { toFailure } from "../errors.js";
import type { ToolKernel } from "../tool/run-tool.js";
import type { SessionStates } from "../kernel/tool/session-state.js";
import type { AnyToolDefinition } from "../kernel/tool/definition.js";
import type { Logger } from "../log.js";
import type { PluginHost } from "../plugins/host.js";
import type { Store } from "../store/index.js";
import { createLazyMcpHttpHandler, mcpTargetOf, sendMcpMethodNotAllowed } from "../mcp/route.js";
import { decodePercent } from "../url-grammar/percent.js";
import { splitTarget } from "../url-grammar/request-url.js";
import { createActivityRecorder } from "../edge/activity-recorder.js";
import { createAuthenticator } from "./authenticate.js";
import { createCallDispatch, type CallDispatchOptions } from "./call-dispatch.js";
import { createInitRoute } from "./init-route.js";
import { JSON_CONTENT_TYPE, sendBytes, sendMethodNotAllowed, sendOpaqueNotFound } from "./respond.js";
import { createRequestSource } from "./request-source.js";
import { createRouteTable } from "./route-table.js";
import {
  createUnknownTokenThrottle,
  NO_UNKNOWN_TOKEN_THROTTLE,
  type UnknownTokenThrottle,
} from "./unknown-token-throttle.js";

export interface DataPlaneOptions {
  store: Store;
  states: SessionStates;
  tools: AnyToolDefinition[];
  /** Runs every tool call (server/tool/run-tool.ts); the data plane only decodes URLs and encodes answers. */
  kernel: ToolKernel;
  plugins: PluginHost;
  publicOrigin: () => string;
  log: Logger;
  signal: AbortSignal;
  /** Peers whose cf-connecting-ip is believed for the unknown-token throttle (URLBRIDGE_TRUSTED_PROXIES). */
  trustedProxies?: readonly string[];
  /** false: every unknown token gets its opaque 404 at once (URLBRIDGE_UNKNOWN_TOKEN_THROTTLE=0). */
  unknownTokenThrottle?: boolean;
  /** One throttle shared with the MCP socket (bridge.ts), so a source's misses count on both; built here when absent. */
  unknownTokens?: UnknownTokenThrottle;
  /** config.agentFallback: who the file tools' new files belong to when the bridge is root (ProjectScope.agentFallback). */
  agentFallback?: { uid: number; gid: number };
  /** Staged JSON arguments of /k plugin calls (blob=&count=), from the mutation runtime's staging. */
  resolveBlob?: CallDispatchOptions["resolveBlob"];
  /** MCP's foreground bound (server/mcp/server.ts McpDeps.callBoundMs); tests shorten it. */
  mcpCallBoundMs?: number;
  /** The bridge's version, MCP's serverInfo (the MCP edge reads no files). */
  version?: string;
}

const INIT_PATH = /^\/v0\/(?:init|bootstrap)\/([^/]*)\/?$/;
const CAP_PATH = /^\/v0\/([^/]+)(?:\/([^/]*))?\/?$/;

export function createDataPlane(options: DataPlaneOptions): http.RequestListener {
  const { store, log } = options;
  const table = createRouteTable(options.tools);
  const record = createActivityRecorder(store.activity);
  const sourceOf = createRequestSource(options.trustedProxies ?? []);
  const unknownTokens: UnknownTokenThrottle =
    options.unknownTokens ??
    (options.unknownTokenThrottle === false ? NO_UNKNOWN_TOKEN_THROTTLE : createUnknownTokenThrottle(log));
  const authenticate = createAuthenticator(store);
  const fallback = options.agentFallback ? { agentFallback: options.agentFallback } : {};
  const handleInit = createInitRoute({
    store,
    table,
    plugins: options.plugins,
    publicOrigin: options.publicOrigin,
    unknownTokens,
    sourceOf,
    record,
    ...fallback,
  });
  const handleCall = createCallDispatch({
    table,
    kernel: options.kernel,
    plugins: options.plugins,
    states: options.states,
    publicOrigin: options.publicOrigin,
    record,
    log,
    signal: options.signal,
    ...fallback,
    ...(options.resolveBlob ? { resolveBlob: options.resolveBlob } : {}),
  });
  const handleMcp = createLazyMcpHttpHandler({
    kernel: options.kernel,
    tools: options.tools,
    plugins: options.plugins,
    states: options.states,
    publicOrigin: options.publicOrigin,
    log,
    signal: options.signal,
    record,
    ...fallback,
    ...(options.mcpCallBoundMs !== undefined ? { callBoundMs: options.mcpCallBoundMs } : {}),
    ...(options.version !== undefined ? { version: options.version } : {}),
    authenticate,
    unknownCapability: (req, res) => unknownTokens.answer(res, sourceOf(req)),
  });

  // MCP (server/mcp/http.ts) is the data plane's one POST surface: its exact paths answer other methods 405
  // Allow: POST, and OAuth discovery probes 404 (never 401) whatever the method; everything else stays 405.
  function handleOtherMethod(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> | void {
    const target = mcpTargetOf(decodePercent(splitTarget(req.url ?? "/").path), req.headers.authorization);
    if (!target) return sendMethodNotAllowed(res);
    if (target.kind === "discovery") return sendOpaqueNotFound(res);
    if (req.method !== "POST") return sendMcpMethodNotAllowed(res);
    return handleMcp(req, res, target.token);
  }

  function handleRequest(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> | void {
    if (req.method !== "GET" && req.method !== "HEAD") return handleOtherMethod(req, res);
    // Printable ASCII only: Node's parser refuses other bytes, and client-error.ts re-encodes a GET that had them.
    const rawTarget = req.url ?? "/";
    const { path: rawPath, rawQuery } = splitTarget(rawTarget);
    const pathname = decodePercent(rawPath);

    const init = INIT_PATH.exec(pathname);
    if (init) return handleInit(req, res, init[1] ?? "");
    const capMatch = CAP_PATH.exec(pathname);
    if (!capMatch || capMatch[1] === "init" || capMatch[1] === "bootstrap") {
      return pathname === "/mcp" ? sendMcpMethodNotAllowed(res) : sendOpaqueNotFound(res);
    }
    if (capMatch[2] === "mcp" && mcpTargetOf(pathname, undefined)) return sendMcpMethodNotAllowed(res);
    const auth = authenticate(capMatch[1]!);
    if (!auth) return unknownTokens.answer(res, sourceOf(req));
    if (req.method === "HEAD") return sendOpaqueNotFound(res);
    return handleCall(res, auth, capMatch[2] ?? "", rawTarget, rawQuery);
  }

  // Tool failures never get here (the call dispatch answers them); this is a bug or a broken store, so the
  // operator gets the stack and the agent a plain retryable 500.
  function answerUnexpected(res: http.ServerResponse, error: unknown): void {
    log.error("data plane request failed", { error: error instanceof Error ? error.stack : String(error) });
    if (res.headersSent) {
      res.destroy();
      return;
    }
    sendBytes(res, 500, JSON_CONTENT_TYPE, Buffer.from(JSON.stringify(toFailure(error)), "utf8"));
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
