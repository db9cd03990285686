// One MCP server per request (stateless): the tools a capability opens, each a thin adapter over a kernel tool,
// every call run through the one kernel (containment, permissions, bounds, the terminal gate, the journal) and
// recorded in the activity log as route "/mcp", without content.
import { fromJsonSchema, McpServer, type AuthInfo } from "@modelcontextprotocol/server";
import { z } from "zod";
import type { CallRecord } from "../edge/activity-recorder.js";
import type { Logger } from "../log.js";
import type { AnyToolDefinition } from "../kernel/tool/definition.js";
import type { MaybePromise, ToolKernel } from "../tool/run-tool.js";
import type { SessionStates } from "../kernel/tool/session-state.js";
import { agentActionField, errorCodeField, wireOutputOf } from "../mutation/journal/envelope.js";
import type { PluginHost } from "../plugins/host.js";
import type { CapabilityLookup } from "../store/sessions.js";
import { publishedAnnotations, publishedInput } from "./listed-tool.js";
import { answerInvalidParams } from "./invalid-params.js";
import { compactOutputSchema } from "./output-schema.js";
import { callTool } from "./call-tool.js";
import { pluginSpecs } from "./tools/plugins.js";
import type { McpToolSpec } from "./tools/spec.js";
import { listedSpecs, MCP_TOOL_SPECS } from "./tool-listing.js";

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
 * What decides a capability's tool list: read or mutation, the project's permissions and whether the session has a
 * worktree of its own (plugins and kernel tools are fixed for the bridge's life). Servers built for one key serve
 * any capability with that key.
 */
export function listingKeyOf(scope: Pick<McpScope, "base" | "cap">): string {
  // Read for every pooled POST and every stdio message; the authenticator hands out one lookup per capability.
  let key = listingKeys.get(scope.cap);
  if (key === undefined)
    listingKeys.set(scope.cap, (key = JSON.stringify([scope.cap.permissions, scope.cap.worktree !== undefined])));
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
  const listing = {
    base: scope.base,
    permissions: scope.cap.permissions,
    worktreeSession: scope.cap.worktree !== undefined,
  };
  return listedSpecs(listing, byId, [...MCP_TOOL_SPECS, ...pluginSpecs(deps.plugins)]).map((spec) => ({
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
