// The plugin host: installed plugins, discovered progressively through /k so the Init contract stays small.
// Plugin tools use the same definition shape as native tools and run through the same runners.
import type { AnyToolDefinition } from "../kernel/tool/definition.js";

export interface PluginStatus {
  state: "ready" | "disconnected" | "needs-auth" | "disabled" | "error";
  detail?: string;
}

export interface Plugin {
  id: string;
  title: string;
  description: string;
  tools: AnyToolDefinition[];
  status(): Promise<PluginStatus>;
}

export interface PluginSummary {
  id: string;
  title: string;
  description: string;
  toolCount: number;
  status: PluginStatus;
}

export interface PluginHost {
  plugins(): Plugin[];
  get(id: string): Plugin | undefined;
  summaries(): Promise<PluginSummary[]>;
}

export function createPluginHost(plugins: Plugin[]): PluginHost {
  const byId = new Map(plugins.map((p) => [p.id, p]));
  return {
    plugins: () => [...byId.values()],
    get: (id) => byId.get(id),
    summaries: async () =>
      Promise.all(
        [...byId.values()].map(async (p) => ({
          id: p.id,
          title: p.title,
          description: p.description,
          toolCount: p.tools.length,
          status: await p.status().catch((e: unknown) => ({ state: "error" as const, detail: String(e) })),
        })),
      ),
  };
}
