// What one authenticated URL call runs with: the parsed request URL, both bases' URLs, the session's state, and
// the ToolContext the kernel gets (its exact URLs build on this request, so repairs are the request corrected).
import { toolContextFor, type AgentFallback } from "../edge/call.js";
import type { AnyToolDefinition, CapabilityBase, ExactUrls, ToolContext } from "../kernel/tool/definition.js";
import type { SessionState, SessionStates } from "../kernel/tool/session-state.js";
import { buildUrl, editRequestUrl, parseRequestUrl, type RequestUrl } from "../url-grammar/request-url.js";
import type { Authenticated } from "./authenticate.js";

// Shared with the MCP edge (server/edge/call.ts); re-exported for the gateway's own modules.
export { projectScopeOf, type AgentFallback } from "../edge/call.js";

/** One call on the data plane, from its request target to its recorded answer. */
export interface UrlCall {
  auth: Authenticated;
  /** The route as the URL spelled it (a long alias stays long). */
  route: string;
  /** The tool field the raw= tail fills, once the route named a tool (the activity record keeps a URL's host only). */
  rawField?: string | undefined;
  url: RequestUrl;
  state: SessionState;
  baseUrl(base: CapabilityBase): string;
  startedAt: number;
}

export function openCall(
  auth: Authenticated,
  route: string,
  rawQuery: string,
  origin: string,
  states: SessionStates,
): UrlCall {
  const startedAt = Date.now();
  const basePath = (b: CapabilityBase) => `/v0/${b === "r" ? auth.tokens.r : auth.tokens.m}`;
  return {
    auth,
    route,
    url: parseRequestUrl(origin, basePath(auth.base), route, rawQuery),
    state: states.get(auth.cap.sessionId, auth.cap.generation),
    baseUrl: (b) => `${origin}${basePath(b)}`,
    startedAt,
  };
}

export function toolContextOf(
  call: UrlCall,
  options: { agentFallback: AgentFallback; signal: AbortSignal },
): ToolContext {
  const { cap, tokens } = call.auth;
  const { url } = call;
  const urls: ExactUrls = {
    to: (base, route, params, raw) =>
      buildUrl(url.origin, `/v0/${base === "r" ? tokens.r : tokens.m}`, route, params, raw),
    repair: (edit) => editRequestUrl(url, edit),
  };
  return toolContextFor({ cap, state: call.state, urls, agentFallback: options.agentFallback, signal: options.signal });
}

/** The base a tool's calls belong on. */
export function baseFor(tool: AnyToolDefinition): CapabilityBase {
  return tool.capability === "read" ? "r" : "m";
}
