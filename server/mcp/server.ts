// One MCP server per request (stateless): the tools a capability opens, each a thin adapter over a kernel tool,
// every call run through the one kernel (containment, permissions, bounds, the terminal gate, the journal) and
// recorded in the activity log as route "/mcp", without content.
import { randomBytes } from "node:crypto";
import { fromJsonSchema, McpServer, type AuthInfo, type CallToolResult } from "@modelcontextprotocol/server";
import { z } from "zod";
import { redactValue, type CallRecord } from "../edge/activity-recorder.js";
import { callRecordOf, failureOf, toolContextFor } from "../edge/call.js";
import { ErrorCode, ToolError, toFailure } from "../errors.js";
import type { Logger } from "../log.js";
import type { AnyToolDefinition, ExactUrls, ToolContext } from "../kernel/tool/definition.js";
import { isToolEnabled } from "../kernel/tool/permissions.js";
import type { CandidateInput, MaybePromise, RunOutcome, ToolKernel } from "../tool/run-tool.js";
import { isPromise } from "../kernel/tool/runner.js";
import type { SessionStates } from "../kernel/tool/session-state.js";
import { CALL_ID_PATTERN, MAX_WAIT_MS } from "../mutation/journal/controls.js";
import { agentActionField, errorCodeField, wireOutputOf } from "../mutation/journal/envelope.js";
import type { PluginHost } from "../plugins/host.js";
import type { CapabilityLookup } from "../store/sessions.js";
import { buildUrl } from "../url-grammar/request-url.js";
import { publishedAnnotations, publishedInput } from "./listed-tool.js";
import { answerInvalidParams } from "./invalid-params.js";
import { compactOutputSchema } from "./output-schema.js";
import { mcpWorded } from "./wording.js";
import { fileTools } from "./tools/files.js";
import { gitTools } from "./tools/git.js";
import { journalTools } from "./tools/journal.js";
import { reviewTools } from "./tools/review.js";
import { pluginSpecs } from "./tools/plugins.js";
import { readTools } from "./tools/read.js";
import { searchTools } from "./tools/search.js";
import { shellTools } from "./tools/shell.js";
import { shellInputTools } from "./tools/shell-input.js";
import { webTools } from "./tools/web.js";
import { failureText, MAX_SETTLE_MS, type McpAnswer, type McpCall, type McpToolSpec } from "./tools/spec.js";

export interface McpScope {
  cap: CapabilityLookup;
  base: "r" | "m";
  tokens: { r: string; m: string | undefined };
  /** Set for calls that came over the stdio socket (activity param `via`); HTTP calls carry none. */
  via?: "stdio";
}

export interface McpDeps {
  kernel: ToolKernel;
  tools: AnyToolDefinition[];
  plugins: PluginHost;
  states: SessionStates;
  publicOrigin: () => string;
  log: Logger;
  signal: AbortSignal;
  agentFallback?: { uid: number; gid: number };
  record: (entry: CallRecord) => void;
  /**
   * The foreground bound: longest one tools/call waits for a journaled intent, from its arrival to its answer,
   * before answering `running` with the next call (default MAX_SETTLE_MS, tools/spec.ts). Tests shorten it.
   */
  callBoundMs?: number;
  /** The bridge's version, for serverInfo (package-info.ts packageVersion; the MCP edge reads no files). */
  version?: string;
}

/** The `_meta` key a client sets to make a tools/call retry-safe: the same key answers the recorded result. */
export const IDEMPOTENCY_KEY_META = "urlbridge/idempotencyKey";
/** Every MCP tool in listing order. */
export const MCP_TOOL_SPECS: readonly McpToolSpec[] = [
  ...readTools,
  ...searchTools,
  ...gitTools,
  ...webTools,
  ...fileTools,
  ...shellTools,
  ...shellInputTools,
  ...journalTools,
  ...reviewTools,
];

/** Bound on /j polls while settling (each waits up to MAX_WAIT_MS). */
const MAX_SETTLE_POLLS = 2_000;
/** The MCP tool that polls an intent (tools/journal.ts): a running answer's `next` names it. */
export const POLL_TOOL = "mutation_result";

const INSTRUCTIONS = [
  "urlbridge gives you one project folder. Paths are relative to its root (or /project/...); nothing outside it is reachable.",
  "Read before you change: write replaces a whole file only after you have read its current version in full; prefer edit or patch for parts.",
  'Every edit, write, patch and shell call runs once per call. To retry one safely, send the same _meta["urlbridge/idempotencyKey"]: a repeat answers the recorded result.',
  "Failures come back with errorCode, repairHint (what to do next) and agentAction.",
].join("\n");

/** What a tool handler gets from the SDK: the request's id and _meta (and, over HTTP, its authInfo). */
export interface McpHandlerContext {
  mcpReq: { id?: string | number; _meta?: Record<string, unknown> };
  http?: { authInfo?: AuthInfo } | undefined;
}

/**
 * What decides a capability's tool list: read or mutation, and the project's permissions (plugins and kernel tools
 * are fixed for the bridge's life). Servers built for one key serve any capability with that key.
 */
export function listingKeyOf(scope: Pick<McpScope, "base" | "cap">): string {
  // Read for every pooled POST and every stdio message; the authenticator hands out one lookup per capability.
  let key = listingKeys.get(scope.cap);
  if (key === undefined) listingKeys.set(scope.cap, (key = JSON.stringify(scope.cap.permissions)));
  return `${scope.base} ${key}`;
}
const listingKeys = new WeakMap<object, string>();

/**
 * An SDK McpServer with the tools `scope` lists registered. Each call runs with `scopeOf(ctx)`: by default the
 * scope the server was built for (a stateless request); a long-lived server (one per stdio connection,
 * socket-connection.ts) passes the scope its transport authenticated for that very message. `onCall`, when given, is
 * told when each tool handler starts and (through the function it returns) when it has returned, answered or not.
 */
export function createMcpServer(
  deps: McpDeps,
  scope: McpScope,
  scopeOf: (ctx: McpHandlerContext) => McpScope = () => scope,
  onCall?: (ctx: McpHandlerContext) => () => void,
): McpServer {
  const server = new McpServer(
    { name: "urlbridge", version: deps.version ?? "0.0.0" },
    {
      // A stateless server cannot send tools/list_changed, so it must not advertise it (../shared/notes/mcp.md).
      capabilities: { tools: { listChanged: false } },
      instructions: INSTRUCTIONS,
    },
  );
  const byId = kernelToolsOf(deps);
  for (const { spec, outputSchema } of registeredTools(deps, scope)) {
    const run = (args: Record<string, unknown>, extra: McpHandlerContext) =>
      callTool(deps, scopeOf(extra), byId, spec, args, extra.mcpReq._meta);
    server.registerTool(
      spec.name,
      {
        title: spec.title,
        description: spec.description,
        inputSchema: publishedInput(spec.input),
        outputSchema,
        annotations: spec.annotations && publishedAnnotations(spec.annotations),
      },
      onCall ? observed(run, onCall) : run,
    );
  }
  answerInvalidParams(server);
  return server;
}

/** A tool handler that tells `onCall` when it starts and (through the function onCall returns) when it has returned. */
function observed<A, R>(
  run: (args: A, extra: McpHandlerContext) => MaybePromise<R>,
  onCall: (ctx: McpHandlerContext) => () => void,
) {
  return async (args: A, extra: McpHandlerContext): Promise<R> => {
    const ended = onCall(extra);
    try {
      return await run(args, extra);
    } finally {
      ended();
    }
  };
}

/** A tool as createMcpServer registers it: its spec and the outputSchema it publishes (and the SDK checks). */
export interface RegisteredTool {
  spec: McpToolSpec;
  outputSchema: PublishedSchema;
}

/** The tools a server built for `scope` registers, in listing order. */
export function registeredTools(deps: McpDeps, scope: McpScope): RegisteredTool[] {
  const byId = kernelToolsOf(deps);
  return listedSpecs(scope, byId, [...MCP_TOOL_SPECS, ...pluginSpecs(deps.plugins)]).map((spec) => ({
    spec,
    outputSchema: outputSchemaOf(spec, byId),
  }));
}

/** Native and plugin kernel tools by id; built once per tool list (a server is created per request). */
const kernelToolMaps = new WeakMap<AnyToolDefinition[], Map<string, AnyToolDefinition>>();

export function kernelToolsOf(deps: McpDeps): Map<string, AnyToolDefinition> {
  let byId = kernelToolMaps.get(deps.tools);
  if (!byId) {
    byId = new Map([...deps.tools, ...deps.plugins.definitions()].map((t) => [t.id, t]));
    kernelToolMaps.set(deps.tools, byId);
  }
  return byId;
}

export type PublishedSchema = ReturnType<typeof fromJsonSchema>;
/** Converted output schemas by spec and kernel tool: converting them on every request would cost each call. */
const publishedSchemas = new WeakMap<McpToolSpec, WeakMap<AnyToolDefinition, PublishedSchema>>();

/** How many outputSchemas were converted since start (warm.ts converts them all before the first MCP call). */
let conversions = 0;
export const outputSchemaConversions = (): number => conversions;

function outputSchemaOf(spec: McpToolSpec, byId: Map<string, AnyToolDefinition>): PublishedSchema {
  const kernelTool = byId.get(spec.kernel)!;
  let bySpec = publishedSchemas.get(spec);
  if (!bySpec) publishedSchemas.set(spec, (bySpec = new WeakMap()));
  let published = bySpec.get(kernelTool);
  if (!published) {
    conversions += 1;
    const success = spec.output ? spec.output((id) => byId.get(id)) : wireOutputOf(kernelTool);
    published = fromJsonSchema(compactOutputSchema(outputJsonSchema(z.union([success, failureOutput]))));
    // ajv compiles a schema on its first validation: done here, once, not in the first tools/call that checks it.
    void published["~standard"].validate({});
    bySpec.set(kernelTool, published);
  }
  return published;
}

/**
 * The tools a bridge may list (every spec whose kernel tool exists, whatever the permissions), for warm.ts to
 * convert their outputSchemas one at a time. Returns a step per tool.
 */
export function schemaWarmSteps(deps: Pick<McpDeps, "tools" | "plugins">): Array<() => void> {
  const byId = kernelToolsOf(deps as McpDeps);
  return [...MCP_TOOL_SPECS, ...pluginSpecs(deps.plugins)]
    .filter((spec) => byId.has(spec.kernel))
    .map((spec) => () => void outputSchemaOf(spec, byId));
}

/** read capability: the read tools the project enables (webfetch, websearch need web); mutation capability: every tool the project's permissions enable. */
export function listedSpecs(
  scope: { base: McpScope["base"]; cap: Pick<McpScope["cap"], "permissions"> },
  byId: Map<string, AnyToolDefinition>,
  specs: readonly McpToolSpec[] = MCP_TOOL_SPECS,
): McpToolSpec[] {
  const listed = specs.filter((spec) => {
    const tool = byId.get(spec.kernel);
    if (!tool) return false;
    if (scope.base === "r") return tool.capability === "read" && isToolEnabled(tool, scope.cap.permissions);
    return isToolEnabled(tool, scope.cap.permissions);
  });
  // A mixed plugin tool lists two specs of one name (tools/plugins.ts): the last one listed stands.
  const last = new Map(listed.map((spec) => [spec.name, spec]));
  return listed.filter((spec) => last.get(spec.name) === spec);
}

/**
 * A failed call's structuredContent (isError: true). It is part of every outputSchema because 2025-era clients
 * (the v1 SDK, which OpenCode uses) validate structuredContent against outputSchema even on errors. Open, since
 * each error code adds its own recovery fields (read, retry, a command's stdout...).
 */
export const failureOutput = z.looseObject({
  ok: z.literal(false),
  errorCode: errorCodeField,
  errorDetail: z.unknown().optional(),
  repairHint: z.string().optional().describe("What to do next, in one sentence."),
  retryable: z.boolean().describe("Whether the same call may succeed later unchanged."),
  agentAction: agentActionField.optional(),
});

/** MCP wants `type: "object"` at an outputSchema's root; a union converts to a bare anyOf, so it is added. */
export function outputJsonSchema(schema: z.ZodType): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { io: "output", unrepresentable: "any" }) as Record<string, unknown>;
  delete json.$schema;
  return json.type === undefined ? { type: "object", ...json } : json;
}

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
