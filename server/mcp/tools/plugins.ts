// Plugin tools over MCP: each hosted plugin tool (server/plugins/host.ts) as `<plugin>_<tool>`, its declared zod
// schema as the input schema, run by the kernel like /k runs it (authority, permissions, the journal).
import { z } from "zod";
import type { PluginHost } from "../../plugins/host.js";
import { answerOf, jsonText, type McpToolSpec } from "./spec.js";

const cache = new WeakMap<PluginHost, McpToolSpec[]>();

/** The MCP name of a plugin tool: MCP clients prefix their server's name with `_`, so `_` separates here too. */
export function pluginToolName(pluginId: string, toolId: string): string {
  return `${pluginId}_${toolId}`;
}

export function pluginSpecs(host: PluginHost): McpToolSpec[] {
  const known = cache.get(host);
  if (known) return known;
  // A mixed tool (read and mutation actions) has two specs of one name: its read half, listed on the read
  // capability, and its mutation half, which runs each action in its own half and wins on the mutation capability
  // (tool-listing.ts listedSpecs keeps the last spec of a name).
  const specs = host.plugins().flatMap((plugin) =>
    host.toolsOf(plugin.id).flatMap((hosted): McpToolSpec[] => {
      const { declared } = hosted;
      const input = z.strictObject(declared.schema.shape);
      const spec = (kernel: typeof hosted.definition, dispatch: boolean): McpToolSpec => ({
        name: pluginToolName(plugin.id, declared.id),
        kernel: kernel.id,
        title: `${plugin.title}: ${declared.id}`,
        description: `${declared.description} (plugin ${plugin.id})`,
        input,
        // A plugin's fields are its own: the activity log keeps only their sizes.
        contentFields: Object.keys(input.shape),
        annotations: {
          readOnlyHint: kernel.capability === "read",
          destructiveHint: kernel.capability === "mutation",
          openWorldHint: false,
        },
        async call(args, call) {
          return answerOf(await call.run(dispatch ? hosted.definitionFor(args).id : kernel.id, args), jsonText);
        },
      });
      return hosted.mutation
        ? [spec(hosted.definition, false), spec(hosted.mutation, true)]
        : [spec(hosted.definition, false)];
    }),
  );
  cache.set(host, specs);
  return specs;
}
