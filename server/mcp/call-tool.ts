// One MCP tools/call: its ToolContext, the idempotency key, the kernel run with its foreground bound and the polls
// that settle a journaled intent, the result in MCP's words, and the call's activity record (route "/mcp").
import { randomBytes } from "node:crypto";
import type { CallToolResult } from "@modelcontextprotocol/server";
import { redactValue } from "../edge/activity-recorder.js";
import { callRecordOf, failureOf, toolContextFor } from "../edge/call.js";
import { ErrorCode, ToolError, toFailure } from "../errors.js";
import type { AnyToolDefinition, ExactUrls, ToolContext } from "../kernel/tool/definition.js";
import { isToolEnabled } from "../kernel/tool/permissions.js";
import type { CandidateInput, MaybePromise, RunOutcome } from "../tool/run-tool.js";
import { isPromise } from "../kernel/tool/runner.js";
import { CALL_ID_PATTERN, MAX_WAIT_MS } from "../mutation/journal/controls.js";
import { buildUrl } from "../url-grammar/request-url.js";
import type { McpDeps, McpScope } from "./server.js";
import { mcpWorded } from "./wording.js";
import { failureText, MAX_SETTLE_MS, type McpAnswer, type McpCall, type McpToolSpec } from "./tools/spec.js";

/** The `_meta` key a client sets to make a tools/call retry-safe: the same key answers the recorded result. */
export const IDEMPOTENCY_KEY_META = "urlbridge/idempotencyKey";
/** Bound on /j polls while settling (each waits up to MAX_WAIT_MS). */
const MAX_SETTLE_POLLS = 2_000;
/** The MCP tool that polls an intent (tools/journal.ts): a running answer's `next` names it. */
export const POLL_TOOL = "mutation_result";

function contextOf(deps: McpDeps, scope: McpScope): ToolContext {
  const { cap, tokens } = scope;
  const urls: ExactUrls = {
    to: (base, route, params, raw) =>
      buildUrl(deps.publicOrigin(), `/v0/${base === "r" ? tokens.r : tokens.m}`, route, params, raw),
    // There is no request URL to correct: repairs are the structured error's words only.
    repair: () => undefined,
  };
  return toolContextFor({
    cap,
    state: deps.states.get(cap.sessionId, cap.generation),
    urls,
    agentFallback: deps.agentFallback,
    signal: deps.signal,
  });
}

function idempotencyKeyOf(meta: Record<string, unknown> | undefined): string | undefined {
  const key = meta?.[IDEMPOTENCY_KEY_META];
  if (key === undefined) return undefined;
  if (typeof key !== "string" || !CALL_ID_PATTERN.test(key)) {
    throw new ToolError(
      ErrorCode.invalidParameter,
      `_meta["${IDEMPOTENCY_KEY_META}"] must be a string of 1-128 letters, digits or . _ : - (e.g. a UUID). Fix it, or leave it out to make every call a new intent.`,
      {
        detail: { parameter: `_meta.${IDEMPOTENCY_KEY_META}` },
        retryable: false,
      },
    );
  }
  return key;
}

interface Journaled {
  callId?: string | undefined;
  dedupe?: string | undefined;
}

/**
 * Runs one tools/call and records it. Synchronous when the tool answered synchronously (read of a text file: the
 * kernel's read never waits), so the MCP socket and HTTP legs answer it without microtask hops; anything that
 * waits comes back as a promise. Either way the result and its activity record are the same. `defer`, when
 * given, receives the call's activity record instead of it being made before callTool returns: the MCP socket
 * makes it right after the answer is written (socket-direct-call.ts).
 */
export function callTool(
  deps: McpDeps,
  scope: McpScope,
  byId: Map<string, AnyToolDefinition>,
  spec: McpToolSpec,
  args: Record<string, unknown>,
  meta: Record<string, unknown> | undefined,
  defer?: (record: () => void) => void,
): MaybePromise<CallToolResult> {
  const startedAt = Date.now();
  const ctx = contextOf(deps, scope);
  const journaled: Journaled = {};
  // The answer becomes the result (a throw while building it is the call's failure), then the call is recorded.
  const settled = (build: () => CallToolResult): CallToolResult => {
    let result: CallToolResult;
    try {
      result = build();
    } catch (error) {
      result = failureResult(deps, spec, error);
    }
    const record = () => recordCall(deps, scope, spec, args, result, journaled, startedAt);
    if (defer) defer(record);
    else record();
    return result;
  };
  let answer: MaybePromise<McpAnswer>;
  try {
    const key = idempotencyKeyOf(meta);
    // One intent per tools/call: the client's key, else a nonce no other call shares (drawn once, and only for a
    // recorded mutation: a read needs none).
    let identity: { call: string } | { run: string } | undefined;
    const identityOf = () =>
      (identity ??= key ? { call: key } : { run: `mcp-${randomBytes(9).toString("base64url")}` });
    const call: McpCall = {
      ctx,
      keyed: key,
      run: (toolId, input, options) => {
        const tool = byId.get(toolId);
        if (!tool)
          return {
            body: toFailure(
              new ToolError(ErrorCode.toolNotEnabled, `${toolId} is not available on this bridge.`, {
                retryable: false,
              }),
            ),
          };
        const recorded = tool.capability === "mutation" && tool.journal?.record !== false;
        // A read (nothing recorded, nothing to settle) answers as the kernel does: synchronously when it can.
        if (!recorded && options?.settleMs === undefined) return deps.kernel.run(tool, input, ctx);
        return (async () => {
          // One bound from the call's arrival to its answer: the kernel's first wait and the polls after it share it.
          const bound = callBoundOf(deps);
          const deadline = startedAt + Math.min(options?.settleMs ?? bound, bound);
          const left = () => Math.max(0, Math.min(MAX_WAIT_MS, deadline - Date.now()));
          const candidate: CandidateInput = recorded
            ? { ...input, ...identityOf(), wait: left() }
            : typeof input.wait === "number"
              ? { ...input, wait: Math.min(input.wait, left()) }
              : input;
          let outcome = await deps.kernel.run(tool, candidate, ctx);
          outcome = await settle(deps, byId, ctx, outcome, deadline, !recorded);
          if (recorded) {
            journaled.callId = outcome.callId ?? (outcome.body as { callId?: string }).callId;
            journaled.dedupe = outcome.dedupe ?? (outcome.body as { dedupe?: string }).dedupe;
          }
          return withNextCall(outcome, byId, scope);
        })();
      },
    };
    answer = spec.call(args, call);
  } catch (error) {
    return settled(() => failureResult(deps, spec, error));
  }
  if (isPromise(answer)) {
    return answer.then(
      (value) => settled(() => successResult(value)),
      (error: unknown) => settled(() => failureResult(deps, spec, error)),
    );
  }
  const value = answer;
  return settled(() => successResult(value));
}

function successResult(answer: McpAnswer): CallToolResult {
  // Every answer leaves worded for MCP (wording.ts), also one a tool built without answerOf; a failure whose body
  // that changed gets its text from the worded body.
  const body = mcpWorded(answer.body);
  const isError = body.ok === false;
  const text = isError && JSON.stringify(body) !== JSON.stringify(answer.body) ? failureText(body) : answer.text;
  const replayed =
    answer.body.dedupe === "replayed"
      ? "Replayed: this call ran before; this is its recorded result (it did not run again).\n"
      : "";
  return {
    content: [...(answer.content ?? []), { type: "text", text: replayed + text }],
    structuredContent: body,
    ...(isError ? { isError: true } : {}),
  };
}

function failureResult(deps: McpDeps, spec: McpToolSpec, error: unknown): CallToolResult {
  const body = mcpWorded(
    failureOf(error, deps.log, `mcp tool ${spec.name} failed unexpectedly`) as unknown as Record<string, unknown>,
  );
  return { content: [{ type: "text", text: failureText(body) }], structuredContent: body, isError: true };
}

/** The foreground bound of a tools/call (McpDeps.callBoundMs), never above MAX_SETTLE_MS. */
export function callBoundOf(deps: Pick<McpDeps, "callBoundMs">): number {
  return Math.min(deps.callBoundMs ?? MAX_SETTLE_MS, MAX_SETTLE_MS);
}

/**
 * A pending or running answer over MCP: `next`, the exact mutation_result call for its outcome (when this
 * capability lists it), and a hint in MCP's words. The URL `poll` stays for clients that can fetch it.
 */
function withNextCall(outcome: RunOutcome, byId: Map<string, AnyToolDefinition>, scope: McpScope): RunOutcome {
  const body = outcome.body as Record<string, unknown>;
  if (body.ok !== true || (body.state !== "pending" && body.state !== "running") || typeof body.callId !== "string")
    return outcome;
  const poll = byId.get("result");
  if (!poll || !isToolEnabled(poll, scope.cap.permissions)) return outcome;
  const hint = `Accepted and still ${body.state}. Call ${POLL_TOOL} with this callId (next) for its outcome; it waits up to ${MAX_SETTLE_MS / 1000} s and never runs the call again.`;
  return {
    ...outcome,
    body: {
      ...body,
      hint,
      next: { tool: POLL_TOOL, arguments: { callId: body.callId } },
    } as unknown as RunOutcome["body"],
  };
}

/**
 * Polls a journaled call that is still pending or running until it finishes, `deadline` passes or the bridge
 * stops. `asPolled` keeps the poll's own shape (with `tool`), for mutation_result; otherwise the answer keeps the
 * polled tool's shape and how the first answer was deduplicated (replayed, joined; a new intent shows none).
 */
async function settle(
  deps: McpDeps,
  byId: Map<string, AnyToolDefinition>,
  ctx: ToolContext,
  outcome: RunOutcome,
  deadline: number,
  asPolled: boolean,
): Promise<RunOutcome> {
  const poll = byId.get("result");
  // The first answer's body carries the dedupe the agent is shown: the journal never shows "new" (journal-runner.ts).
  const shown = (outcome.body as { dedupe?: unknown }).dedupe;
  let current = outcome;
  for (let i = 0; poll && i < MAX_SETTLE_POLLS; i++) {
    const body = current.body as Record<string, unknown>;
    const unfinished =
      body.ok === true && (body.state === "pending" || body.state === "running") && typeof body.callId === "string";
    if (!unfinished || Date.now() >= deadline || ctx.signal.aborted) break;
    const polled = await deps.kernel.run(
      poll,
      { call: body.callId, wait: Math.max(0, Math.min(MAX_WAIT_MS, deadline - Date.now())) },
      ctx,
    );
    if (asPolled) {
      current = polled;
      continue;
    }
    const { tool: _tool, dedupe: _dedupe, ...rest } = polled.body as Record<string, unknown>;
    // The poll answers the intent's recorded body; how the first call was answered (dedupe) still holds.
    current = {
      ...outcome,
      body: { ...rest, ...(shown === "replayed" || shown === "joined" ? { dedupe: shown } : {}) } as RunOutcome["body"],
    };
  }
  return current;
}

function recordCall(
  deps: McpDeps,
  scope: McpScope,
  spec: McpToolSpec,
  args: Record<string, unknown>,
  result: CallToolResult,
  journaled: Journaled,
  startedAt: number,
): void {
  const body = result.structuredContent as Record<string, unknown>;
  const params: Record<string, string> = { mcp: spec.name, ...(scope.via ? { via: scope.via } : {}) };
  for (const [name, value] of Object.entries(args)) {
    if (value === undefined) continue;
    const text = typeof value === "string" ? value : JSON.stringify(value);
    params[name] = spec.contentFields.includes(name)
      ? `<${Buffer.byteLength(text, "utf8")} bytes>`
      : redactValue(name, text);
  }
  try {
    deps.record(
      callRecordOf({
        cap: scope.cap,
        route: "/mcp",
        tool: spec.kernel,
        body: { ok: body.ok !== false, errorCode: body.errorCode },
        startedAt,
        outcome: journaled,
        params,
      }),
    );
  } catch (error) {
    deps.log.warn("mcp activity record failed", { error: error instanceof Error ? error.message : String(error) });
  }
}
