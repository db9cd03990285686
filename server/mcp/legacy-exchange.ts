// One stateless 2025-era POST as a JSON-RPC exchange with a (pooled) McpServer, without the SDK's web-standard
// transport: the parsed body goes in as messages, the answers come out as JSON text, and nothing is built from or
// into a web Request/Response. It answers what WebStandardStreamableHTTPServerTransport answers in stateless JSON
// mode (sessionIdGenerator undefined, enableJsonResponse true) for a parsed body, status and bytes alike:
// test/integration/mcp/endpoint.test.ts pins them. The SDK client sends its Accept and Content-Type, which http.ts
// checks (or normalises) before this runs.
import {
  isInitializeRequest,
  isJSONRPCErrorResponse,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  parseJSONRPCMessage,
  SUPPORTED_PROTOCOL_VERSIONS,
  type AuthInfo,
  type JSONRPCMessage,
  type McpServer,
  type Transport,
  type TransportSendOptions,
} from "@modelcontextprotocol/server";
import { batchTooLargeMessage, MCP_MAX_BATCH_SIZE } from "./limits.js";

/** An answer: JSON text for 200 and the errors, none for 202 (notifications only), 499 when the client went away. */
export interface ExchangeAnswer {
  status: number;
  json: string | undefined;
}

type RpcId = string | number;

/** The SDK's createJsonErrorResponse body: id null, whatever the request's id. */
const errorAnswer = (status: number, code: number, message: string): ExchangeAnswer => ({
  status,
  json: JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }),
});

/** A transport for exactly one exchange: what the server answers to the delivered requests, collected by id. */
class ExchangeTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: { authInfo?: AuthInfo }) => void;
  supportedVersions: readonly string[] = SUPPORTED_PROTOCOL_VERSIONS;
  private readonly answers = new Map<RpcId, JSONRPCMessage>();
  private expected: RpcId[] = [];
  private settle: ((answer: ExchangeAnswer) => void) | undefined;
  private closed = false;

  async start(): Promise<void> {}

  setSupportedProtocolVersions(versions: string[]): void {
    this.supportedVersions = versions;
  }

  /** Delivers the requests and resolves once each has its answer (one: that answer; several: an array). */
  run(messages: JSONRPCMessage[], authInfo: AuthInfo): Promise<ExchangeAnswer> {
    this.expected = messages.filter((m) => isJSONRPCRequest(m)).map((m) => (m as { id: RpcId }).id);
    const answered = new Promise<ExchangeAnswer>((resolve) => (this.settle = resolve));
    for (const message of messages) this.onmessage?.(message, { authInfo });
    return answered;
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const isAnswer = isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message);
    // JSON mode drops notifications sent mid-call (progress, logging), as the SDK's transport does.
    if (!isAnswer) return;
    const id = (message as { id: RpcId }).id;
    if (!this.expected.includes(id))
      throw new Error(`No connection established for request ID: ${String(id ?? options?.relatedRequestId)}`);
    this.answers.set(id, message);
    if (!this.expected.every((expectedId) => this.answers.has(expectedId))) return;
    const all = this.expected.map((expectedId) => this.answers.get(expectedId)!);
    this.settle?.({ status: 200, json: JSON.stringify(all.length === 1 ? all[0] : all) });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.settle?.({ status: 499, json: undefined });
    this.onclose?.();
  }
}

/**
 * Serves one POST's parsed body on `server`, which must not be connected. `protocolVersion` is the request's
 * MCP-Protocol-Version header. The server is closed again (free for the next request) before this resolves, or
 * when `signal` aborts: then the answer is 499, nobody is left to read it.
 */
export async function exchangeLegacy(
  server: McpServer,
  body: unknown,
  authInfo: AuthInfo,
  protocolVersion: string | undefined,
  signal: AbortSignal,
): Promise<ExchangeAnswer> {
  if (Array.isArray(body) && body.length > MCP_MAX_BATCH_SIZE) return errorAnswer(400, -32600, batchTooLargeMessage);
  let messages: JSONRPCMessage[];
  try {
    messages = (Array.isArray(body) ? body : [body]).map((m) => parseJSONRPCMessage(m));
  } catch {
    return errorAnswer(400, -32700, "Parse error: Invalid JSON-RPC message");
  }
  const initializing = messages.some((m) => isInitializeRequest(m));
  if (initializing && messages.length > 1)
    return errorAnswer(400, -32600, "Invalid Request: Only one initialization request is allowed");
  const transport = new ExchangeTransport();
  await server.connect(transport);
  try {
    if (!initializing && protocolVersion !== undefined && !transport.supportedVersions.includes(protocolVersion)) {
      return errorAnswer(
        400,
        -32000,
        `Bad Request: Unsupported protocol version: ${protocolVersion} (supported versions: ${transport.supportedVersions.join(", ")})`,
      );
    }
    if (!messages.some((m) => isJSONRPCRequest(m))) {
      for (const message of messages) transport.onmessage?.(message, { authInfo });
      return { status: 202, json: undefined };
    }
    if (signal.aborted) return { status: 499, json: undefined };
    const onAbort = () => void transport.close();
    signal.addEventListener("abort", onAbort, { once: true });
    try {
      return await transport.run(messages, authInfo);
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
  } finally {
    // Runs the server's close hook synchronously: once this returns, the server may serve the next request.
    await transport.close();
  }
}
