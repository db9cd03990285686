// The plugin host: installed plugins, discovered progressively through /k so the Init contract stays small.
// Plugin tools are hosted as kernel tool definitions (hosted-tool.ts) and run by the same kernel runner as native
// tools; start-up recovery finds a plugin intent's tool among definitions().
import type { AnyToolDefinition } from "../kernel/tool/definition.js";
import { JOURNAL_CONTROL_NAMES } from "../mutation/journal/controls.js";
import type { AnyPluginTool, Plugin, PluginStatus } from "./definition.js";
import { hostDefinitions, pickDefinition } from "./hosted-tool.js";

export type { Plugin, PluginStatus } from "./definition.js";

export interface PluginSummary {
  id: string;
  title: string;
  description: string;
  toolCount: number;
  status: PluginStatus;
}

export interface HostedPluginTool {
  plugin: Plugin;
  declared: AnyPluginTool;
  /** What the kernel runs: the tool, or a mixed tool's read half. */
  definition: AnyToolDefinition;
  /** A mixed tool's mutation half (PluginToolDefinition.mutations). */
  mutation?: AnyToolDefinition;
  /** The definition an argument object runs with: `definition`, or `mutation` for a mixed tool's mutation action. */
  definitionFor(args: unknown): AnyToolDefinition;
}

export interface PluginHost {
  /** Every installed plugin, set up or not: what the operator's Plugins page lists. */
  plugins(): Plugin[];
  /** The plugins agents are offered: installed and set up (issue 32: a plugin that cannot run is not offered). */
  offered(): Plugin[];
  get(id: string): Plugin | undefined;
  tool(pluginId: string, toolId: string): HostedPluginTool | undefined;
  toolsOf(pluginId: string): HostedPluginTool[];
  /** Every hosted definition, for start-up recovery of plugin intents. */
  definitions(): AnyToolDefinition[];
  /** Every installed plugin's status for the operator; `offeredOnly`: just the plugins agents are offered (/k). */
  summaries(options?: { offeredOnly?: boolean }): Promise<PluginSummary[]>;
}

const PLUGIN_ID = /^[a-z][a-z0-9-]{0,31}$/;
const TOOL_ID = /^[a-z][a-z0-9_]{0,47}$/;

/** Checks every declaration once at start-up: a bad plugin is an operator error, not an agent's. */
function assertDeclaration(plugin: Plugin, seen: Set<string>): void {
  if (!PLUGIN_ID.test(plugin.id)) throw new Error(`plugin id "${plugin.id}" must match ${PLUGIN_ID}`);
  if (seen.has(plugin.id)) throw new Error(`plugin "${plugin.id}" is installed twice`);
  const tools = new Set<string>();
  for (const tool of plugin.tools) {
    if (!TOOL_ID.test(tool.id)) throw new Error(`plugin ${plugin.id}: tool id "${tool.id}" must match ${TOOL_ID}`);
    if (tools.has(tool.id)) throw new Error(`plugin ${plugin.id}: tool "${tool.id}" is declared twice`);
    if (tool.capability !== "read" && tool.capability !== "mutation")
      throw new Error(`plugin ${plugin.id}: tool "${tool.id}" must be read or mutation`);
    const reserved = Object.keys(tool.schema.shape).filter((k) => (JOURNAL_CONTROL_NAMES as string[]).includes(k));
    if (reserved.length > 0)
      throw new Error(
        `plugin ${plugin.id}: tool "${tool.id}" declares ${reserved.join(", ")}, which are journal controls`,
      );
    if (tool.mutations && (tool.capability !== "read" || !(tool.mutations.field in tool.schema.shape))) {
      throw new Error(
        `plugin ${plugin.id}: tool "${tool.id}" lists mutation actions, so it must be declared read and have a "${tool.mutations.field}" member`,
      );
    }
    tools.add(tool.id);
  }
}

export function createPluginHost(plugins: Plugin[]): PluginHost {
  const seen = new Set<string>();
  const byId = new Map<string, { plugin: Plugin; tools: Map<string, HostedPluginTool> }>();
  for (const plugin of plugins) {
    assertDeclaration(plugin, seen);
    seen.add(plugin.id);
    const offered = plugin.unconfigured === undefined ? plugin.tools : [];
    const tools = new Map(
      offered.map((declared): [string, HostedPluginTool] => {
        const hosted = hostDefinitions(plugin, declared);
        return [
          declared.id,
          { plugin, declared, ...hosted, definitionFor: (args) => pickDefinition(declared, hosted, args) },
        ];
      }),
    );
    byId.set(plugin.id, { plugin, tools });
  }
  return {
    plugins: () => [...byId.values()].map((p) => p.plugin),
    offered: () => [...byId.values()].filter((p) => p.plugin.unconfigured === undefined).map((p) => p.plugin),
    get: (id) => byId.get(id)?.plugin,
    tool: (pluginId, toolId) => byId.get(pluginId)?.tools.get(toolId),
    toolsOf: (pluginId) => [...(byId.get(pluginId)?.tools.values() ?? [])],
    definitions: () =>
      [...byId.values()].flatMap((p) =>
        [...p.tools.values()].flatMap((t) => (t.mutation ? [t.definition, t.mutation] : [t.definition])),
      ),
    summaries: async (options) =>
      Promise.all(
        [...byId.values()]
          .filter(({ plugin }) => !options?.offeredOnly || plugin.unconfigured === undefined)
          .map(async ({ plugin, tools }) => ({
            id: plugin.id,
            title: plugin.title,
            description: plugin.description,
            toolCount: tools.size,
            status:
              plugin.unconfigured !== undefined
                ? { state: "not-configured" as const, detail: plugin.unconfigured }
                : await plugin.status().catch((e: unknown) => ({ state: "error" as const, detail: String(e) })),
          })),
      ),
  };
}
