// /k on either base: lists installed plugins, describes one plugin's tools with their full schemas, and calls
// a plugin tool with its arguments as a JSON object in the raw= tail (or staged with /s: blob=&count=). The
// call runs through the same kernel runner as a native tool; mutations are journaled intents whose identity
// covers the plugin, the tool and the key-sorted arguments, so a replayed URL executes once.
import { z } from "zod";
import { ErrorCode, ToolError } from "../errors.js";
import type { CapabilityBase, ToolContext } from "../kernel/tool/definition.js";
import { isToolEnabled } from "../kernel/tool/permissions.js";
import type { MaybePromise, RunOutcome, ToolKernel } from "../tool/run-tool.js";
import { validateInput } from "../kernel/tool/validate-input.js";
import { JOURNAL_CONTROL_NAMES, journalControls } from "../mutation/journal/controls.js";
import type { HostedPluginTool, PluginHost } from "../plugins/host.js";
import { bindQueryInput } from "../url-grammar/bind.js";
import { editRequestUrl, type RequestUrl, type SegmentEdit } from "../url-grammar/request-url.js";

const ID = z.string().min(1).max(64);
const pluginQuerySchema = z.object({
  plugin: ID.optional(),
  tool: ID.optional(),
  args: z.string().optional(),
  blob: z.string().min(1).max(128).optional(),
  count: z.number().int().min(1).max(4096).optional(),
  ...journalControls,
});
type PluginQuery = z.infer<typeof pluginQuerySchema>;
const binding = { rawField: "args" };

export interface PluginCall {
  url: RequestUrl;
  /** The base the request arrived on. */
  base: CapabilityBase;
  /** Token of each capability base; m is undefined when the session has none. */
  tokens: { r: string; m: string | undefined };
  ctx: ToolContext;
  /** Told the hosted tool's id once the call names a plugin tool, for the activity record. */
  named?: (toolId: string) => void;
}

export interface PluginRouteDeps {
  host: PluginHost;
  kernel: ToolKernel;
  /** Staged content of the call's session (server/mutation/staging); absent in a build without mutations. */
  resolveBlob?: (ctx: ToolContext, blob: string, count: number | undefined) => string;
}

export function answerPluginsRoute(deps: PluginRouteDeps, call: PluginCall): MaybePromise<RunOutcome> {
  const query = validateInput<PluginQuery>(
    pluginQuerySchema,
    bindQueryInput({ schema: pluginQuerySchema, binding, url: call.url }),
    { rawField: binding.rawField },
  );
  const { host } = deps;
  if (query.plugin === undefined) {
    if (query.tool !== undefined) {
      throw new ToolError(
        ErrorCode.missingParameter,
        "tool= needs plugin=<id> beside it. /k lists the installed plugins.",
        { detail: { parameter: "plugin" } },
      );
    }
    rejectCallParameters(call.url, query, "/k with no plugin= lists plugins");
    return host.summaries({ offeredOnly: true }).then((plugins) => ({ body: { ok: true, plugins } }));
  }
  // A plugin the operator has not set up is not offered: to an agent it is not there (issue 32).
  const plugin = host.offered().find((p) => p.id === query.plugin);
  if (!plugin) {
    throw new ToolError(
      ErrorCode.unknownPlugin,
      `No plugin "${query.plugin}" is available on this bridge. /k lists the plugins it offers.`,
      {
        detail: { plugin: query.plugin },
        repair: editRequestUrl(call.url, {
          drop: ["plugin", "tool", "raw", "args", "blob", "count", ...JOURNAL_CONTROL_NAMES],
        }),
      },
    );
  }
  if (query.tool === undefined) {
    rejectCallParameters(call.url, query, `/k?plugin=${plugin.id} with no tool= describes the plugin`);
    return describePlugin(deps, call, plugin.id);
  }
  const hosted = host.tool(plugin.id, query.tool);
  if (!hosted) {
    const tools = host.toolsOf(plugin.id).map((t) => t.declared.id);
    throw new ToolError(
      ErrorCode.unknownPluginTool,
      `Plugin ${plugin.id} has no tool "${query.tool}". Its tools: ${tools.join(", ") || "none"}. /k?plugin=${plugin.id} describes them.`,
      {
        detail: { plugin: plugin.id, tool: query.tool, tools },
      },
    );
  }
  // A mixed tool's action decides its half (read or journaled mutation) before the permission check; arguments
  // that do not parse pick the read half, whose decode then answers the parse error.
  const definition = hosted.mutation ? hosted.definitionFor(peekArguments(deps, call, query)) : hosted.definition;
  call.named?.(definition.id);
  return deps.kernel.runDecoded(
    definition,
    () => decodeCall(deps, call, hosted, definition, query),
    pluginCallContext(call),
  );
}

function peekArguments(deps: PluginRouteDeps, call: PluginCall, query: PluginQuery): unknown {
  try {
    const text =
      query.args ??
      (query.blob !== undefined && deps.resolveBlob ? deps.resolveBlob(call.ctx, query.blob, query.count) : undefined);
    return text === undefined ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** List and describe take no call parameters; a stray one is a mistake worth naming. */
function rejectCallParameters(url: RequestUrl, query: PluginQuery, what: string): void {
  const stray = (["args", "blob", "count", ...JOURNAL_CONTROL_NAMES] as const).filter((k) => query[k] !== undefined);
  if (stray.length === 0) return;
  const spelled = stray.map((k) => (k === "args" ? "raw" : k));
  throw new ToolError(
    ErrorCode.unknownParameter,
    `${what}; ${spelled.join(", ")} only apply to a call (plugin=&tool=). Remove them, or add tool=.`,
    {
      detail: { parameters: spelled },
      repair: editRequestUrl(url, {
        drop: [...stray.filter((k) => k !== "args")],
        ...(query.args !== undefined ? { rawText: null } : {}),
      }),
    },
  );
}

/** After the permission check: the base, the journal controls and the JSON arguments, as the kernel's candidate. */
function decodeCall(
  deps: PluginRouteDeps,
  call: PluginCall,
  hosted: HostedPluginTool,
  definition: HostedPluginTool["definition"],
  query: PluginQuery,
): Record<string, unknown> {
  const wanted: CapabilityBase = definition.capability === "read" ? "r" : "m";
  if (wanted !== call.base) {
    const token = call.tokens[wanted];
    const controls = definition.capability === "read" ? [...JOURNAL_CONTROL_NAMES] : [];
    const what = hosted.mutation
      ? `this action of ${hosted.declared.id} is a ${definition.capability}`
      : `${hosted.declared.id} is a ${definition.capability} tool of plugin ${hosted.plugin.id}`;
    throw new ToolError(
      ErrorCode.wrongCapabilityBase,
      `${what}: call it on the ${wanted === "r" ? "read" : "mutation"} base. Fetch the repair URL.`,
      {
        detail: { tool: definition.id, expectedBase: wanted },
        ...(token
          ? {
              repair: editRequestUrl(call.url, {
                basePath: `/v0/${token}`,
                ...(controls.length ? { drop: controls } : {}),
              }),
            }
          : {}),
      },
    );
  }
  if (definition.capability === "read") {
    const given = JOURNAL_CONTROL_NAMES.filter((k) => query[k] !== undefined);
    if (given.length > 0) {
      throw new ToolError(
        ErrorCode.unknownParameter,
        `${given.join(", ")} apply to mutation tools only; ${hosted.declared.id} is a read tool. Remove them.`,
        {
          detail: { parameters: given },
          repair: editRequestUrl(call.url, { drop: given }),
        },
      );
    }
  }
  const args = argumentsOf(deps, call, query, hosted);
  const controls = Object.fromEntries(
    JOURNAL_CONTROL_NAMES.filter((k) => query[k] !== undefined).map((k) => [k, query[k]]),
  );
  return { ...args, ...controls };
}

function argumentsOf(
  deps: PluginRouteDeps,
  call: PluginCall,
  query: PluginQuery,
  hosted: HostedPluginTool,
): Record<string, unknown> {
  const example = hosted.definition.example;
  if (query.args !== undefined && query.blob !== undefined) {
    throw new ToolError(
      ErrorCode.conflictingParameters,
      "Give the arguments once: as raw={json} or as a staged blob=<id>&count=<n>, not both.",
      {
        detail: { parameters: ["raw", "blob"] },
      },
    );
  }
  if (query.count !== undefined && query.blob === undefined) {
    throw new ToolError(
      ErrorCode.missingParameter,
      "count= describes a staged blob; give blob=<id> with it, or drop count=.",
      {
        detail: { parameter: "blob" },
        repair: editRequestUrl(call.url, { drop: ["count"] }),
      },
    );
  }
  let text: string | undefined = query.args;
  if (query.blob !== undefined) {
    if (!deps.resolveBlob)
      throw new ToolError(
        ErrorCode.toolNotEnabled,
        "Staged arguments need the mutation runtime, which this build does not have. Pass raw={json}.",
        { retryable: false },
      );
    text = deps.resolveBlob(call.ctx, query.blob, query.count);
  }
  if (text === undefined || text.trim() === "") return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ToolError(
      ErrorCode.pluginArgumentsInvalid,
      `The arguments are not JSON (${(error as Error).message}). Send one JSON object after raw=, e.g. ${example}.`,
      {
        detail: { received: text.slice(0, 80) },
        retryable: false,
      },
    );
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new ToolError(
      ErrorCode.pluginArgumentsInvalid,
      `The arguments must be one JSON object ({...}), not ${Array.isArray(parsed) ? "an array" : parsed === null ? "null" : typeof parsed}. Example: ${example}.`,
      {
        detail: { received: text.slice(0, 80) },
        retryable: false,
      },
    );
  }
  const reserved = JOURNAL_CONTROL_NAMES.filter((k) => k in parsed);
  if (reserved.length > 0) {
    throw new ToolError(
      ErrorCode.pluginArgumentsInvalid,
      `${reserved.join(", ")} are URL parameters of the call, not arguments: move them out of the JSON, before raw=.`,
      {
        detail: { members: reserved },
        retryable: false,
      },
    );
  }
  return parsed as Record<string, unknown>;
}

/**
 * Zod repairs name a field by its URL key; a plugin's fields live inside the JSON, where an edit of the URL would
 * change nothing. So only edits of parameters the URL really carries (wait, run, call...) are offered.
 */
function pluginCallContext(call: PluginCall): ToolContext {
  const keys = new Set(call.url.query.segments.map((s) => s.key));
  const inUrl = (edit: SegmentEdit) =>
    (!edit.set || keys.has(edit.set.key)) && (!edit.rename || keys.has(edit.rename.from));
  return {
    ...call.ctx,
    urls: { ...call.ctx.urls, repair: (edit) => (inUrl(edit) ? call.ctx.urls.repair(edit) : undefined) },
  };
}

async function describePlugin(deps: PluginRouteDeps, call: PluginCall, pluginId: string): Promise<RunOutcome> {
  const plugin = deps.host.get(pluginId)!;
  const { permissions } = call.ctx.project;
  return {
    body: {
      ok: true,
      plugin: plugin.id,
      title: plugin.title,
      description: plugin.description,
      status: await plugin.status().catch((e: unknown) => ({ state: "error" as const, detail: String(e) })),
      tools: deps.host.toolsOf(plugin.id).map(({ declared, definition, mutation }) => {
        const base: CapabilityBase = declared.capability === "read" ? "r" : "m";
        const enabled = isToolEnabled(definition, permissions) && call.tokens[base] !== undefined;
        const mutationEnabled =
          mutation !== undefined && isToolEnabled(mutation, permissions) && call.tokens.m !== undefined;
        return {
          id: declared.id,
          capability: declared.capability,
          base,
          enabled,
          description: declared.description,
          params: Object.keys(declared.schema.shape),
          inputSchema: z.toJSONSchema(declared.schema, { io: "input", unrepresentable: "any" }),
          outputSchema: z.toJSONSchema(declared.output, { unrepresentable: "any" }),
          ...(enabled ? { call: exampleUrl(call, base, plugin.id, declared.id, declared.example) } : {}),
          // A mixed tool: which actions are mutations (mutation base, journaled); the rest are reads (read base).
          ...(declared.mutations
            ? {
                mutationActions: [...declared.mutations.actions],
                mutationEnabled,
                ...(mutationEnabled
                  ? { mutationCall: exampleUrl(call, "m", plugin.id, declared.id, declared.mutations.example) }
                  : {}),
              }
            : {}),
        };
      }),
    },
  };
}

function exampleUrl(
  call: PluginCall,
  base: CapabilityBase,
  pluginId: string,
  toolId: string,
  example: unknown,
): string {
  return call.ctx.urls.to(
    base,
    "k",
    [
      ["plugin", pluginId],
      ["tool", toolId],
    ],
    JSON.stringify(example ?? {}),
  );
}
