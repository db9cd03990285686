// Turns a plugin's tool declaration into a kernel tool definition, so a plugin call goes through the same
// runner as a native tool: validation, the permission check, the intent journal for mutations, error
// conversion. The host adds the journal controls, a namespaced id and the call's narrowed authority.
import { z } from "zod";
import type { AnyToolDefinition, ToolContext } from "../kernel/tool/definition.js";
import { journalControls } from "../mutation/journal/controls.js";
import { deriveAuthority, narrowAuthority } from "./authority.js";
import type { AnyPluginTool, Plugin, PluginToolContext } from "./definition.js";

/** The journal and activity id of a plugin tool: `<plugin>.<tool>`, e.g. "demo.note_append". */
export function hostedToolId(pluginId: string, toolId: string): string {
  return `${pluginId}.${toolId}`;
}

export function hostTool(plugin: Plugin, tool: AnyPluginTool): AnyToolDefinition {
  const id = hostedToolId(plugin.id, tool.id);
  // Strict: a JSON member the tool does not declare is refused rather than silently ignored. The journal
  // controls arrive as URL parameters and are stripped by the journal runner before execute.
  const shape = tool.capability === "mutation" ? { ...tool.schema.shape, ...journalControls } : tool.schema.shape;
  const example = `/k?plugin=${plugin.id}&tool=${tool.id}&raw=${JSON.stringify(tool.example ?? {})}`;
  return {
    id,
    route: "k",
    longRoutes: [],
    capability: tool.capability,
    ...(tool.permission ? { permission: tool.permission } : {}),
    description: tool.description,
    schema: z.strictObject(shape),
    output: tool.output,
    url: {},
    example,
    ...(tool.capability === "mutation" ? { journal: { ...tool.journal } } : {}),
    execute(args: Record<string, unknown>, ctx: ToolContext) {
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
