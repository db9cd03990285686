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

/** What an operator does to set it up: the compose profile in the appliance, a local `opencode serve` elsewhere. */
function setupAdvice(inAppliance: boolean): string {
  return inAppliance
    ? "Optional, not set up. To use it, set URLBRIDGE_OPENCODE_PASSWORD (16 characters or more) and a provider in .env, then run docker compose --profile opencode up -d (deploy/GUIDE.md, section 11)."
    : "Optional, not set up. To use it, run opencode serve --hostname 127.0.0.1 --port 4096 with OPENCODE_SERVER_PASSWORD set, and start urlbridge with the same value in URLBRIDGE_OPENCODE_PASSWORD (docs/PLUGINS.md).";
}

export function createOpenCodePlugin(settings: OpenCodeSettings, context: { inAppliance?: boolean } = {}): Plugin {
  const api = createApi(createOpenCodeClient(settings));
  const deps = { api, settings, groups: new Map<string, Promise<string>>() };
  return {
    id: PLUGIN_ID,
    title: "OpenCode Control",
    description:
      "Inspect and drive OpenCode sessions inside the project and delegate task-like workers to a loopback `opencode serve`.",
    tools: [infoTool(deps), sessionTool(deps), workerTool(deps), requestTool(deps)],
    status: () => api.client.status(),
    ...(settings.configured === false ? { unconfigured: setupAdvice(context.inAppliance ?? false) } : {}),
  };
}
