// opencode_info: the live OpenCode service (status with connection and auth state, capabilities, providers,
// models, agents), urlbridge's own limits, and this project's usage. Read only; status never throws.
import { z } from "zod";
import { definePluginTool } from "../../../server/plugins/definition.js";
import { type Api, urlbridgeMetaOf } from "../api.js";
import { callOf, type PluginDeps, visibleSessions } from "../call.js";
import { PAGE_MAX, PROMPT_MAX_CHARS, SWARM_MAX, TEXT_PAGE_CHARS, WAIT_DEFAULT_MS, WAIT_MAX_MS } from "../settings.js";
import { actionOutput, directoryField } from "./common.js";

const schema = z.object({
  action: z.enum(["status", "capabilities", "providers", "models", "agents", "limits", "usage"]),
  directory: directoryField.optional(),
});

/** What the v1 API cannot do that reference designs of this plugin offer: said, not silently missing. */
const NOT_AVAILABLE = {
  "opencode_session selection, set_selection": "no per-client selection state exists in OpenCode 1.18's HTTP API",
  "opencode_session turn":
    "the blocking POST /session/{id}/message would hold a URL reader past the tunnel's limit; send + opencode_worker wait does the same in bounded steps",
  "opencode_session pause, resume": "OpenCode 1.18 has no pause; abort stops a turn and send continues the session",
  "opencode_session background_subagents":
    "/experimental/capabilities reports backgroundSubagents false in 1.18.33 and the route is experimental",
  "instance pinning header":
    "1.18 has no x-opencode-expect-instance; the plugin re-identifies the instance (version and its home/state/config paths) before the calls of every tool call instead",
};

export function infoTool(deps: PluginDeps & { api: Api }) {
  return definePluginTool({
    id: "opencode_info",
    capability: "read",
    description:
      "Reads the OpenCode service: status (ready, not-running, needs-auth, instance-changed, with connection and auth state), capabilities, providers, models, agents, urlbridge's limits, and this project's usage.",
    schema,
    output: actionOutput,
    example: { action: "status" },
    authority: (args) => (args.directory ? { root: args.directory } : undefined),
    async execute(args, ctx) {
      const call = callOf(deps, ctx);
      const { api, settings } = call;
      const out = (fields: Record<string, unknown>) => ({ ok: true as const, action: args.action, ...fields });
      switch (args.action) {
        case "status": {
          const report = await api.client.report(true);
          return out({ state: report.state, detail: report.detail, connection: report.connection });
        }
        case "capabilities":
          return out({
            opencode: await api.capabilities(call.root),
            settings: {
              allowExisting: settings.allowExisting,
              allowNested: settings.allowNested,
              maxWorkers: settings.maxWorkers,
            },
            permissions: ctx.authority.permissions,
            notAvailable: NOT_AVAILABLE,
          });
        case "providers": {
          const { providers, default: defaults } = await api.providers(call.root);
          return out({
            providers: providers.map((p) => ({ id: p.id, name: p.name ?? p.id, models: Object.keys(p.models ?? {}) })),
            defaults: defaults ?? {},
          });
        }
        case "models": {
          const { providers } = await api.providers(call.root);
          const models = providers.flatMap((p) =>
            Object.entries(p.models ?? {}).map(([id, m]) => ({
              model: `${p.id}/${id}`,
              name: m.name ?? id,
              context: m.limit?.context ?? null,
              output: m.limit?.output ?? null,
            })),
          );
          return out({ models });
        }
        case "agents": {
          const agents = await api.agents(call.root);
          return out({
            agents: agents
              .filter((a) => !a.hidden)
              .map((a) => ({ name: a.name, mode: a.mode ?? null, description: (a.description ?? "").slice(0, 512) })),
          });
        }
        case "limits":
          return out({
            maxWorkers: settings.maxWorkers,
            swarmMax: SWARM_MAX,
            waitDefaultMs: WAIT_DEFAULT_MS,
            waitMaxMs: WAIT_MAX_MS,
            pageMax: PAGE_MAX,
            textPageChars: TEXT_PAGE_CHARS,
            promptMaxChars: PROMPT_MAX_CHARS,
          });
        case "usage": {
          const sessions = await visibleSessions(call);
          const sum = (list: typeof sessions) => ({
            sessions: list.length,
            cost: list.reduce((n, s) => n + (s.cost ?? 0), 0),
            tokens: list.reduce(
              (n, s) => ({ input: n.input + (s.tokens?.input ?? 0), output: n.output + (s.tokens?.output ?? 0) }),
              { input: 0, output: 0 },
            ),
          });
          return out({
            all: sum(sessions),
            workers: sum(sessions.filter((s) => urlbridgeMetaOf(s)?.kind === "worker")),
            basis: "cumulative session totals as OpenCode reports them",
          });
        }
      }
    },
  });
}
