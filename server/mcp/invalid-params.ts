// JSON-RPC -32602 Invalid params, in a few words, for every request whose params the SDK's wire schemas refuse.
// The SDK (@modelcontextprotocol/server 2.x) validates a spec method's params inside the handler it stores, and
// throws a plain Error for initialize, tools/list and ping: its dispatcher then answers -32603 Internal error with
// zod's issue list as the message. tools/call already answers -32602, but with the same dump. Each request handler
// of a server createMcpServer built is wrapped once, so every transport that dispatches through the SDK (the HTTP
// legs, the MCP socket and with it the stdio relay) answers the same; test/integration/mcp/protocol-hygiene.test.ts
// pins it against the exact SDK version.
import { ProtocolError, ProtocolErrorCode, type McpServer } from "@modelcontextprotocol/server";

/** The most issues one answer names; the rest are counted. */
const MAX_ISSUES = 3;
const MAX_MESSAGE_CHARS = 400;

type Handler = (request: { method: string; params?: unknown }, ctx: unknown) => Promise<unknown>;

interface Issue {
  path?: Array<string | number>;
  message?: string;
}

/** zod's issue list, when `text` is one (a JSON array of issues, as its Error message carries it). */
function issuesIn(text: string): Issue[] | undefined {
  const start = text.indexOf("[");
  if (start < 0) return undefined;
  try {
    const parsed = JSON.parse(text.slice(start)) as unknown;
    return Array.isArray(parsed) &&
      parsed.every((i) => i && typeof i === "object" && typeof (i as Issue).message === "string")
      ? (parsed as Issue[])
      : undefined;
  } catch {
    return undefined;
  }
}

/** "Invalid params for initialize: params.protocolVersion: expected string, received number; ..." */
export function invalidParamsMessage(method: string, issues: Issue[]): string {
  const named = issues.slice(0, MAX_ISSUES).map((issue) => {
    const where = issue.path && issue.path.length > 0 ? issue.path.join(".") : "params";
    return `${where}: ${String(issue.message).replace(/^Invalid input: /, "")}`;
  });
  const more = issues.length > MAX_ISSUES ? `; and ${issues.length - MAX_ISSUES} more` : "";
  const text = `Invalid params for ${method}: ${named.join("; ")}${more}. See the MCP specification for ${method}'s params.`;
  return text.length <= MAX_MESSAGE_CHARS ? text : `${text.slice(0, MAX_MESSAGE_CHARS - 1)}…`;
}

/**
 * The error a handler threw, as the client should get it: a params refusal (a plain Error, or the SDK's own -32602,
 * whose message is a zod issue list) becomes a short -32602; anything else passes unchanged.
 */
function asInvalidParams(method: string, error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const code = (error as { code?: unknown }).code;
  const isProtocolError = error instanceof ProtocolError || typeof code === "number";
  if (isProtocolError && code !== ProtocolErrorCode.InvalidParams) return error;
  const issues = issuesIn(error.message);
  if (!issues) return error;
  return new ProtocolError(ProtocolErrorCode.InvalidParams, invalidParamsMessage(method, issues));
}

/** Wraps each request handler `server` has registered so params refusals answer a short -32602 (above). */
export function answerInvalidParams(server: McpServer): void {
  const handlers = (server.server as unknown as { _requestHandlers?: Map<string, Handler> })._requestHandlers;
  // Pinned by protocol-hygiene.test.ts: an SDK without the map fails that test rather than this start-up.
  if (!(handlers instanceof Map)) return;
  for (const [method, handler] of handlers) {
    handlers.set(method, async (request, ctx) => {
      try {
        return await handler(request, ctx);
      } catch (error) {
        throw asInvalidParams(method, error);
      }
    });
  }
}
