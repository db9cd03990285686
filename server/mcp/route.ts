// Which data-plane requests belong to MCP, and the 405 its endpoint answers to anything but POST. Kept apart
// from http.ts so the data plane can route without loading the MCP SDK, which loads on the first MCP POST.
import type http from "node:http";
import type { McpHttpDeps, McpRequestHandler } from "./http.js";

export type McpTarget = { kind: "endpoint"; token: string | undefined } | { kind: "discovery" };

const CAP_MCP_PATH = /^\/v0\/([^/]+)\/mcp$/;
const BEARER = /^Bearer[ \t]+([^ \t]+)[ \t]*$/i;

/**
 * What a decoded request path means to MCP: the endpoint (`/v0/<cap>/mcp`, or `/mcp` with the capability as a
 * bearer), an OAuth discovery or registration probe (answered 404, never 401: urlbridge has no OAuth), or
 * nothing. Exact paths only: a trailing slash or a longer path is not the endpoint.
 */
export function mcpTargetOf(pathname: string, authorization: string | undefined): McpTarget | undefined {
  if (pathname === "/mcp")
    return { kind: "endpoint", token: authorization === undefined ? undefined : BEARER.exec(authorization)?.[1] };
  const cap = CAP_MCP_PATH.exec(pathname);
  if (cap) return { kind: "endpoint", token: cap[1] };
  if (pathname === "/register" || pathname.includes("/.well-known/")) return { kind: "discovery" };
  return undefined;
}

/** GET (the SDK would open an SSE stream), DELETE (no session to end) and the rest: clients read this as "no stream". */
export function sendMcpMethodNotAllowed(res: http.ServerResponse): void {
  res.writeHead(405, { Allow: "POST", "Content-Length": 0, "Cache-Control": "no-store" });
  res.end();
}

/**
 * The MCP endpoint's handler, its module (and with it the MCP SDK, about a fifth of what start-up would load)
 * imported on the first MCP POST instead of at start-up: the first answer of a bridge never needs it.
 */
export function createLazyMcpHttpHandler(deps: McpHttpDeps): McpRequestHandler {
  let loading: Promise<McpRequestHandler> | undefined;
  return async (req, res, token) => {
    loading ??= import("./http.js").then((m) => m.createMcpHttpHandler(deps));
    const handler = await loading.catch((error: unknown) => {
      loading = undefined;
      throw error;
    });
    return handler(req, res, token);
  };
}
