// The bundled OpenCode Control plugin: four tools over a lazy, loopback-only, instance-pinned client of a real
// `opencode serve` (v1 HTTP API of opencode-ai 1.18.33). Nothing connects until a tool call or a status read.
import type { Plugin } from "../../server/plugins/definition.js";
import { createApi } from "./api.js";
import { createOpenCodeClient } from "./client.js";
import { PLUGIN_ID, type OpenCodeSettings } from "./settings.js";
import { infoTool } from "./tools/info.js";
import { requestTool } from "./tools/request.js";
import { sessionTool } from "./tools/session.js";
import { workerTool } from "./tools/worker.js";

export { PLUGIN_ID } from "./settings.js";
export type { OpenCodeSettings } from "./settings.js";

export function createOpenCodePlugin(settings: OpenCodeSettings): Plugin {
  const api = createApi(createOpenCodeClient(settings));
  const deps = { api, settings, groups: new Map<string, Promise<string>>() };
  return {
    id: PLUGIN_ID,
    title: "OpenCode Control",
    description:
      "Inspect and drive OpenCode sessions inside the project and delegate task-like workers to a loopback `opencode serve`.",
    tools: [infoTool(deps), sessionTool(deps), workerTool(deps), requestTool(deps)],
    status: () => api.client.status(),
  };
}
