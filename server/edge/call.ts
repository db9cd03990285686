// The steps every call takes at either edge (the URL data plane, server/gateway/, and MCP, server/mcp/), in one
// place so the two cannot drift: the ToolContext the kernel runs with, the activity record the operator sees, and
// the failure an unexpected throw becomes (logged with its stack; a ToolError is the agent's answer, not a fault).
// Both edges depend on this folder; it depends on neither.
import { toFailure, isToolError, type ToolFailure } from "../errors.js";
import type { ExactUrls, ProjectScope, ToolContext } from "../kernel/tool/definition.js";
import type { RunOutcome } from "../kernel/tool/runner.js";
import type { SessionState } from "../kernel/tool/session-state.js";
import type { Logger } from "../log.js";
import type { CapabilityLookup } from "../store/sessions.js";
import type { CallRecord } from "./activity-recorder.js";

export type AgentFallback = ProjectScope["agentFallback"];

export function projectScopeOf(cap: CapabilityLookup, agentFallback: AgentFallback): ProjectScope {
  return {
    id: cap.projectId,
    name: cap.projectName,
    root: cap.root,
    permissions: cap.permissions,
    ...(agentFallback ? { agentFallback } : {}),
  };
}

/** What a call's ToolContext is built from: its capability, its session's state, and how its edge words URLs. */
export interface EdgeCallContext {
  cap: CapabilityLookup;
  state: SessionState;
  urls: ExactUrls;
  agentFallback: AgentFallback;
  signal: AbortSignal;
}

/** The ToolContext the kernel runs one call with, the same whichever edge it came through. */
export function toolContextFor({ cap, state, urls, agentFallback, signal }: EdgeCallContext): ToolContext {
  return {
    project: projectScopeOf(cap, agentFallback),
    session: { id: cap.sessionId, name: cap.sessionName, generation: cap.generation },
    state,
    urls,
    signal,
    ...(cap.worktree ? { worktree: cap.worktree } : {}),
  };
}

/** One call as the activity log keeps it: who, which route and tool, the outcome and its journal identity. */
export interface EdgeCallRecord {
  cap: Pick<CapabilityLookup, "sessionId" | "generation">;
  /** "/r", "/mcp", "init"... */
  route: string;
  /** The tool or gateway route that answered, or null when the call was refused before any was invoked. */
  tool: string | null;
  body: { ok: boolean; errorCode?: unknown };
  startedAt: number;
  outcome?:
    Pick<RunOutcome, "callId" | "dedupe"> | { callId?: string | undefined; dedupe?: string | undefined } | undefined;
  /** Already redacted (activity-recorder.ts redactParams / redactValue). */
  params: Record<string, string> | null;
}

export function callRecordOf(call: EdgeCallRecord): CallRecord {
  const { body } = call;
  return {
    sessionId: call.cap.sessionId,
    generation: call.cap.generation,
    route: call.route,
    tool: call.tool,
    ok: body.ok,
    errorCode: body.ok ? null : typeof body.errorCode === "string" ? body.errorCode : null,
    httpStatus: 200,
    startedAt: call.startedAt,
    callId: call.outcome?.callId,
    dedupe: call.outcome?.dedupe,
    params: call.params,
  };
}

/**
 * The failure an edge answers for something thrown while serving a call: a ToolError is the agent's structured
 * refusal; anything else is a bug or a broken store, logged with its stack as `what` and answered internal_error.
 */
export function failureOf(error: unknown, log: Logger, what: string): ToolFailure {
  if (!isToolError(error)) log.error(what, { error: error instanceof Error ? error.stack : String(error) });
  return toFailure(error);
}
