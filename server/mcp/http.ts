// The MCP endpoint over Streamable HTTP: stateless (nothing a client sees is kept between POSTs; 2025-era POSTs
// reuse idle servers, server-pool.ts, and a plain tools/call skips the SDK's dispatch, http-direct-call.ts) and JSON
// only, never SSE (the quick tunnel carries none). Serves the 2026-07-28 protocol and the 2025-era handshake side by side.
import type http from "node:http";
import {
  classifyInboundRequest,
  createMcpHandler,
  isJsonContentType,
  type AuthInfo,
  type McpHttpHandler,
} from "@modelcontextprotocol/server";
import type { Authenticated } from "../edge/capability.js";
import { JSON_CONTENT_TYPE, sendBytes, sendOpaqueNotFound } from "../edge/http-answer.js";
import { MCP_MAX_BODY_BYTES, tooLargeMessage } from "./limits.js";
import { createMcpServer, type McpDeps, type McpScope } from "./server.js";
import { createServerPool, type ServerPool } from "./server-pool.js";
import { exchangeLegacy, type ExchangeAnswer } from "./legacy-exchange.js";
import { createDirectToolsByListing } from "./direct-call.js";
import { admitHttpCall, admitHttpPing } from "./http-direct-call.js";

export { MCP_MAX_BODY_BYTES } from "./limits.js";
/**
 * Bytes past the limit still read and discarded so the refusal reaches the client: closing a socket with unread
 * data makes the kernel send a reset, which can destroy the answer in flight. Beyond this the connection closes.
 */
const MCP_DISCARD_BYTES = 16 * 1024 * 1024;

/** JSON-RPC codes (JSON-RPC 2.0 §5.1; -32000 is what the SDK uses for transport-level refusals). */
const PARSE_ERROR = -32700;
const METHOD_NOT_FOUND = -32601;
const INTERNAL_ERROR = -32603;
const TRANSPORT_REFUSAL = -32000;

/** The SDK answers 406 unless both are listed, even in JSON mode; some proxies and clients send only JSON. */
const NORMALISED_ACCEPT = "application/json, text/event-stream";
/** Methods only a stream can answer (the SDK serves subscriptions/listen over SSE whatever the response mode). */
const STREAM_ONLY_METHODS = new Set(["subscriptions/listen"]);
/** Where the capability travels to the server factory: the authInfo the SDK passes through untouched. */
const SCOPE_KEY = "urlbridgeScope";

export interface McpHttpDeps extends McpDeps {
  /** The data plane's capability lookup (gateway/authenticate.ts). */
  authenticate: (token: string) => Authenticated | undefined;
  /** Answers an unknown or malformed capability: the URL routes' opaque 404, through their unknown-token throttle. */
  unknownCapability: (req: http.IncomingMessage, res: http.ServerResponse) => void;
}

/** What the data plane calls for an MCP POST; `token` is the capability from the path or the bearer header. */
export type McpRequestHandler = (
  req: http.IncomingMessage,
  res: http.ServerResponse,
  token: string | undefined,
) => Promise<void>;

function sendRpcError(
  res: http.ServerResponse,
  status: number,
  code: number,
  message: string,
  id: unknown = null,
  close = false,
): void {
  if (close) res.setHeader("Connection", "close");
  const body = {
    jsonrpc: "2.0",
    id: typeof id === "string" || typeof id === "number" ? id : null,
    error: { code, message },
  };
  sendBytes(res, status, JSON_CONTENT_TYPE, Buffer.from(JSON.stringify(body), "utf8"));
}

type BodyRead = { kind: "body"; bytes: Buffer } | { kind: "too_large"; drained: boolean } | { kind: "gone" };

/**
 * Reads the request body up to `limit` bytes; a larger one is discarded (bounded) and reported, never kept. A client
 * that hangs up mid-body is "gone": nobody is left to answer, and it is not the bridge's fault.
 */
function readBoundedBody(req: http.IncomingMessage, limit: number): Promise<BodyRead> {
  if (Number(req.headers["content-length"]) > limit + MCP_DISCARD_BYTES)
    return Promise.resolve({ kind: "too_large", drained: false });
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const onData = (chunk: Buffer) => {
      total += chunk.length;
      if (total <= limit) chunks.push(chunk);
      else if (total > limit + MCP_DISCARD_BYTES) {
        req.off("data", onData);
        req.pause();
        resolve({ kind: "too_large", drained: false });
      }
    };
    req.on("data", onData);
    req.once("end", () =>
      resolve(
        total > limit ? { kind: "too_large", drained: true } : { kind: "body", bytes: Buffer.concat(chunks, total) },
      ),
    );
    req.once("error", () => resolve({ kind: "gone" }));
    req.once("close", () => {
      if (!req.complete) resolve({ kind: "gone" });
    });
  });
}

/** Headers that describe a body; the web request carries none (below). */
const BODY_HEADERS = new Set(["content-length", "transfer-encoding", "content-encoding"]);

/**
 * The request as the SDK's web-standard entry sees it, without a body: the body is always handed over already
 * parsed (`parsedBody`), and the SDK classifies from that and the headers alone. @modelcontextprotocol/node's
 * toWebRequest would serialise the parsed body again to build one nobody reads.
 */
function webRequestOf(req: http.IncomingMessage, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name.startsWith(":") || BODY_HEADERS.has(name)) continue;
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else headers.set(name, value);
  }
  return new Request(`http://${req.headers.host ?? "localhost"}${req.url ?? "/"}`, { method: "POST", headers, signal });
}

/** A header as the web request's Headers.get reads it: repeated values joined with ", " (as node:http joins them). */
function headerOf(req: http.IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(", ") : value;
}

/**
 * Whether the SDK's entry would route this POST to 2025-era serving: what isLegacyRequest(request, parsedBody)
 * decides (classifyInboundRequest on the parsed body and the three headers it reads), without first building the
 * web request it would read them from.
 */
function isLegacyPost(req: http.IncomingMessage, message: unknown): boolean {
  const version = headerOf(req, "mcp-protocol-version");
  const method = headerOf(req, "mcp-method");
  const name = headerOf(req, "mcp-name");
  return (
    classifyInboundRequest({
      httpMethod: "POST",
      body: message,
      ...(version !== undefined && { protocolVersionHeader: version }),
      ...(method !== undefined && { mcpMethodHeader: method }),
      ...(name !== undefined && { mcpNameHeader: name }),
    }).kind === "legacy"
  );
}

interface Hangup {
  /** Whether the client went away before its answer was written. */
  readonly gone: () => boolean;
  /** Aborts when it does; built on first use: a direct tools/call needs none (http-direct-call.ts). */
  readonly signal: () => AbortSignal;
}

function watchHangup(res: http.ServerResponse): Hangup {
  let gone = false;
  let controller: AbortController | undefined;
  res.once("close", () => {
    if (res.writableFinished) return;
    gone = true;
    controller?.abort();
  });
  return {
    gone: () => gone,
    signal: () => {
      if (!controller) {
        controller = new AbortController();
        if (gone) controller.abort();
      }
      return controller.signal;
    },
  };
}

function streamOnlyMethodOf(message: unknown): { method: string; id: unknown } | undefined {
  for (const m of Array.isArray(message) ? message : [message]) {
    if (m && typeof m === "object" && STREAM_ONLY_METHODS.has((m as { method?: unknown }).method as string)) {
      return { method: (m as { method: string }).method, id: (m as { id?: unknown }).id };
    }
  }
  return undefined;
}

function authInfoOf(token: string, scope: McpScope): AuthInfo {
  return { token, clientId: scope.cap.sessionId, scopes: [scope.base], extra: { [SCOPE_KEY]: scope } };
}

function scopeOf(authInfo: AuthInfo | undefined): McpScope {
  const scope = authInfo?.extra?.[SCOPE_KEY] as McpScope | undefined;
  // Every request reaches the SDK with its authInfo; without it this is a wiring bug, not a client error.
  if (!scope) throw new Error("MCP request reached the server factory without its capability scope");
  return scope;
}

/** The modern leg, created once: responseMode json never streams a tools/call answer; 2025-era traffic is ours. */
function createModernHandler(deps: McpDeps): McpHttpHandler {
  const factory = (ctx: { authInfo?: AuthInfo }) => createMcpServer(deps, scopeOf(ctx.authInfo));
  // createMcpHandler console.warns that json mode drops mid-call notifications: a choice made on purpose here
  // (docs/MCP.md says so); the operator's log gets it at debug instead of a stray line on stderr.
  const warn = console.warn;
  console.warn = (...args: unknown[]) => deps.log.debug(`MCP SDK: ${args.map(String).join(" ")}`);
  try {
    return createMcpHandler(factory, {
      legacy: "reject",
      responseMode: "json",
      onerror: (error) => deps.log.debug("MCP request refused", { error: error.message }),
    });
  } finally {
    console.warn = warn;
  }
}

/**
 * The 2025-era leg: the parsed body exchanged with an idle server for the capability's tool listing
 * (server-pool.ts) through a one-exchange transport (legacy-exchange.ts), answering as the SDK's stateless JSON
 * transport would, without building a web Response.
 */
async function serveLegacy(
  pool: ServerPool,
  message: unknown,
  authInfo: AuthInfo,
  version: string | undefined,
  signal: AbortSignal,
): Promise<ExchangeAnswer> {
  const scope = scopeOf(authInfo);
  const server = pool.take(scope);
  const answer = await exchangeLegacy(server, message, authInfo, version, signal);
  // A hung-up call may still be running on this server: it is not reused.
  if (answer.status !== 499) pool.give(scope, server, message);
  return answer;
}

/** What the SDK's Response.json answers carry (not the data plane's JSON_CONTENT_TYPE, which names the charset). */
const JSON_CONTENT_TYPE_SDK = "application/json";
const AGENT_HEADERS = {
  "Cache-Control": "no-store",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
};

/** Writes an exchange's answer as the SDK's transport would have sent it (writeResponse below). */
function writeAnswer(res: http.ServerResponse, answer: ExchangeAnswer): void {
  const headers: Record<string, string | number> = { ...AGENT_HEADERS };
  if (answer.json === undefined) {
    res.writeHead(answer.status, headers);
    return void res.end();
  }
  const bytes = Buffer.from(answer.json, "utf8");
  headers["content-type"] = JSON_CONTENT_TYPE_SDK;
  headers["Content-Length"] = bytes.length;
  res.writeHead(answer.status, headers);
  res.end(bytes);
}

/** Writes an SDK answer to node:http. Only JSON or an empty body ever leaves: a stream is a bug, refused here. */
async function writeResponse(
  res: http.ServerResponse,
  response: Response,
  id: unknown,
  log: McpDeps["log"],
): Promise<void> {
  const contentType = response.headers.get("content-type");
  if (contentType !== null && /^\s*text\/event-stream/i.test(contentType)) {
    await response.body?.cancel().catch(() => {});
    log.error("MCP answer would have been an SSE stream; refused (the endpoint answers JSON only)", {
      status: response.status,
    });
    return sendRpcError(res, 500, INTERNAL_ERROR, "The server tried to answer with a stream; retry the call.", id);
  }
  const bytes = Buffer.from(await response.arrayBuffer());
  const headers: Record<string, string | number> = { ...AGENT_HEADERS };
  for (const [name, value] of response.headers) if (name !== "content-length") headers[name] = value;
  if (bytes.length > 0 || response.status !== 202) headers["Content-Length"] = bytes.length;
  res.writeHead(response.status, headers);
  res.end(bytes);
}

/**
 * Returns the handler the data plane calls for `POST /v0/<cap>/mcp` and `POST /mcp` (Bearer). A missing, unknown or
 * malformed capability gets the URL routes' opaque 404; everything after that is JSON-RPC.
 */
export function createMcpHttpHandler(deps: McpHttpDeps): McpRequestHandler {
  let modern: McpHttpHandler | undefined;
  // Each call runs with the scope its own request authenticated, whichever capability the server was built for.
  const pool = createServerPool((scope) => createMcpServer(deps, scope, (ctx) => scopeOf(ctx.http?.authInfo)));
  const directTools = createDirectToolsByListing(deps);
  deps.signal.addEventListener("abort", () => void modern?.close().catch(() => {}), { once: true });

  async function serve(req: http.IncomingMessage, res: http.ServerResponse, token: string): Promise<void> {
    const auth = deps.authenticate(token);
    if (!auth) return deps.unknownCapability(req, res);
    const read = await readBoundedBody(req, MCP_MAX_BODY_BYTES);
    if (read.kind === "gone") return;
    if (read.kind === "too_large") {
      return sendRpcError(res, 413, TRANSPORT_REFUSAL, tooLargeMessage, null, !read.drained);
    }
    if (!isJsonContentType(req.headers["content-type"] ?? null)) {
      return sendRpcError(
        res,
        415,
        TRANSPORT_REFUSAL,
        "Unsupported Media Type: send the JSON-RPC message with Content-Type: application/json.",
      );
    }
    let message: unknown;
    try {
      message = JSON.parse(read.bytes.toString("utf8"));
    } catch {
      return sendRpcError(
        res,
        400,
        PARSE_ERROR,
        "Parse error: the request body is not valid JSON. Send one JSON-RPC message as UTF-8 JSON.",
      );
    }
    const streamOnly = streamOnlyMethodOf(message);
    if (streamOnly) {
      return sendRpcError(
        res,
        200,
        METHOD_NOT_FOUND,
        `${streamOnly.method} needs a stream, and this endpoint is stateless and answers JSON only; call tools/list again to see the current tools.`,
        streamOnly.id,
      );
    }
    const hangup = watchHangup(res);
    if (isLegacyPost(req, message)) {
      const version = headerOf(req, "mcp-protocol-version");
      // A plain tools/call skips the SDK's dispatch (http-direct-call.ts); a client that hung up gets nothing run.
      // A plain ping too: the SDK's answer is an empty result, the same for every server (direct-ping.ts).
      const pong = admitHttpPing(message, version);
      if (pong !== undefined) return hangup.gone() ? undefined : writeAnswer(res, { status: 200, json: pong });
      const tools = directTools(auth);
      const call = admitHttpCall(tools, message, version);
      if (call) {
        if (hangup.gone()) return;
        const json = await tools.answer(call, auth);
        if (hangup.gone() || res.destroyed) return;
        return writeAnswer(res, { status: 200, json });
      }
      const answer = await serveLegacy(pool, message, authInfoOf(token, auth), version, hangup.signal());
      // 499: the client hung up mid-call; there is nobody left to answer.
      if (answer.status === 499 || res.destroyed) return;
      return writeAnswer(res, answer);
    }
    req.headers.accept = NORMALISED_ACCEPT;
    const request = webRequestOf(req, hangup.signal());
    const response = await (modern ??= createModernHandler(deps)).fetch(request, {
      parsedBody: message,
      authInfo: authInfoOf(token, auth),
    });
    if (response.status === 499 || res.destroyed) return;
    const id = message && typeof message === "object" ? (message as { id?: unknown }).id : null;
    await writeResponse(res, response, id, deps.log);
  }

  return async (req, res, token) => {
    if (token === undefined) return sendOpaqueNotFound(res);
    try {
      await serve(req, res, token);
    } catch (error) {
      // Tool failures are results (isError) and never get here: this is a bug or a broken store. The operator
      // gets the stack, the client a JSON-RPC internal error without one.
      deps.log.error("MCP request failed", { error: error instanceof Error ? error.stack : String(error) });
      if (res.headersSent || res.destroyed) return void res.destroy();
      sendRpcError(
        res,
        500,
        INTERNAL_ERROR,
        "Internal error: the bridge could not answer this request. Retry it; if it keeps failing, the operator's log has the cause.",
      );
    }
  };
}
