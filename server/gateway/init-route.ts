// /v0/init/<token> (and /v0/bootstrap/<token>): the Init contract an agent starts from, answered as plain JSON
// for an init capability and recorded as route "init"; any other token gets the throttled opaque 404.
import type http from "node:http";
import { callRecordOf } from "../edge/call.js";
import { isToolListed, mutationEnabled } from "../kernel/tool/permissions.js";
import type { PluginHost } from "../plugins/host.js";
import type { Store } from "../store/index.js";
import { lookupCapability } from "./authenticate.js";
import { projectScopeOf, type AgentFallback } from "./call-context.js";
import type { RecordCall } from "./finish-call.js";
import { buildInitContract } from "./init-contract.js";
import { sendOpaqueNotFound, sendPlainJson } from "./respond.js";
import type { RouteTable } from "./route-table.js";
import type { UnknownTokenThrottle } from "./unknown-token-throttle.js";

export interface InitRouteOptions {
  store: Store;
  table: RouteTable;
  plugins: PluginHost;
  publicOrigin: () => string;
  unknownTokens: UnknownTokenThrottle;
  sourceOf: (req: http.IncomingMessage) => string;
  record: RecordCall;
  agentFallback?: AgentFallback;
}

export type InitHandler = (req: http.IncomingMessage, res: http.ServerResponse, token: string) => void;

export function createInitRoute(options: InitRouteOptions): InitHandler {
  const { store, table } = options;
  return (req, res, token) => {
    const started = Date.now();
    const cap = lookupCapability(store, token);
    if (!cap || cap.kind !== "init") return options.unknownTokens.answer(res, options.sourceOf(req));
    if (req.method === "HEAD") return sendOpaqueNotFound(res);
    const caps = store.sessions.capabilitiesFor(cap.sessionId, cap.generation);
    // A plugin whose mutations are open to read-only sessions gives every session a mutation base.
    const mutationBase = mutationEnabled(cap.permissions) || openPluginMutations(options.plugins);
    const origin = options.publicOrigin();
    const contract = buildInitContract({
      project: projectScopeOf(cap, options.agentFallback),
      readBase: `${origin}/v0/${caps.read}`,
      mutationBase: mutationBase && caps.mutation ? `${origin}/v0/${caps.mutation}` : undefined,
      tools: table.tools.filter((t) => isToolListed(t, cap.permissions, cap.worktree !== undefined)),
      pluginsAvailable: options.plugins.offered().length > 0,
    });
    sendPlainJson(res, contract);
    options.record(
      callRecordOf({ cap, route: "init", tool: null, body: { ok: true }, startedAt: started, params: null }),
    );
  };
}

function openPluginMutations(plugins: PluginHost): boolean {
  return plugins.definitions().some((d) => d.capability === "mutation" && d.openToReadOnly === true);
}
