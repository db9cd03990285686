// Turns a plugin's tool declaration into a kernel tool definition, so a plugin call goes through the same
// runner as a native tool: validation, the permission check, the intent journal for mutations, error
// conversion. The host adds the journal controls, a namespaced id and the call's narrowed authority.
import { z } from "zod";
import { ErrorCode, ToolError } from "../errors.js";
import type { AnyToolDefinition, ToolContext } from "../kernel/tool/definition.js";
import { journalControls } from "../mutation/journal/controls.js";
import { deriveAuthority, narrowAuthority } from "./authority.js";
import type { AnyPluginTool, Plugin, PluginToolContext } from "./definition.js";

/** The journal and activity id of a plugin tool: `<plugin>.<tool>`, e.g. "demo.note_append". */
export function hostedToolId(pluginId: string, toolId: string): string {
  return `${pluginId}.${toolId}`;
}

/** The kernel id of a mixed tool's read half; its mutation half keeps the plain id, which journal records carry. */
export function hostedReadId(pluginId: string, toolId: string): string {
  return `${hostedToolId(pluginId, toolId)}:read`;
}

/** What the host runs for one declared tool: one definition, or for a mixed tool its read and mutation halves. */
export interface HostedDefinitions {
  definition: AnyToolDefinition;
  mutation?: AnyToolDefinition;
}

export function hostDefinitions(plugin: Plugin, tool: AnyPluginTool): HostedDefinitions {
  if (!tool.mutations) return { definition: hostTool(plugin, tool) };
  const read = hostTool(plugin, tool, "read");
  const mutation = hostTool(plugin, tool, "mutation");
  return { definition: read, mutation };
}

/** The half of a mixed tool an argument object asks for: its action member decides. */
export function pickDefinition(tool: AnyPluginTool, hosted: HostedDefinitions, args: unknown): AnyToolDefinition {
  if (!tool.mutations || !hosted.mutation) return hosted.definition;
  const action =
    args !== null && typeof args === "object" ? (args as Record<string, unknown>)[tool.mutations.field] : undefined;
  return typeof action === "string" && tool.mutations.actions.includes(action) ? hosted.mutation : hosted.definition;
}

export function hostTool(plugin: Plugin, tool: AnyPluginTool, half?: "read" | "mutation"): AnyToolDefinition {
  const capability = half ?? tool.capability;
  const id = half === "read" ? hostedReadId(plugin.id, tool.id) : hostedToolId(plugin.id, tool.id);
  // Strict: a JSON member the tool does not declare is refused rather than silently ignored. The journal
  // controls arrive as URL parameters and are stripped by the journal runner before execute.
  const shape = capability === "mutation" ? { ...tool.schema.shape, ...journalControls } : tool.schema.shape;
  const exampleArgs = half === "mutation" ? (tool.mutations?.example ?? {}) : (tool.example ?? {});
  const example = `/k?plugin=${plugin.id}&tool=${tool.id}&raw=${JSON.stringify(exampleArgs)}`;
  return {
    id,
    route: "k",
    longRoutes: [],
    capability,
    ...(capability === "mutation" && tool.openToReadOnly ? { openToReadOnly: true } : {}),
    ...(tool.permission ? { permission: tool.permission } : {}),
    description: tool.description,
    schema: z.strictObject(shape),
    output: tool.output,
    url: {},
    example,
    ...(capability === "mutation" ? { journal: { ...tool.journal } } : {}),
    execute(args: Record<string, unknown>, ctx: ToolContext) {
      if (half) assertHalf(tool, half, args, id);
      const granted = deriveAuthority(ctx.project);
      const authority = narrowAuthority(granted, tool.authority?.(args, granted), id);
      const pluginCtx: PluginToolContext = {
        ...ctx,
        project: { ...ctx.project, root: authority.root, permissions: { ...authority.permissions } },
        authority,
      };
      return tool.execute(args, pluginCtx);
    },
  };
}

/** A mixed tool's half runs only its own actions (MCP can reach either half with any action). */
function assertHalf(tool: AnyPluginTool, half: "read" | "mutation", args: Record<string, unknown>, id: string): void {
  const field = tool.mutations!.field;
  const action = args[field];
  const isMutation = typeof action === "string" && tool.mutations!.actions.includes(action);
  if (isMutation === (half === "mutation")) return;
  throw new ToolError(
    ErrorCode.wrongCapabilityBase,
    `${field} "${String(action)}" of ${tool.id} is a ${isMutation ? "mutation" : "read"}: call it on the ${isMutation ? "mutation" : "read"} base.`,
    {
      detail: { tool: id, expectedBase: isMutation ? "m" : "r" },
    },
  );
}
