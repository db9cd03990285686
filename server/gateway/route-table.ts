// Maps compact and long route names to tools, and knows which routes belong to which capability base.
import type { AnyToolDefinition, CapabilityBase } from "../kernel/tool/definition.js";

/** Routes handled by the gateway itself rather than by a tool. */
export const GATEWAY_ROUTES = {
  range: { route: "z", longRoutes: ["range", "replay"] },
  manifest: { route: "manifest", longRoutes: [] as string[] },
  plugins: { route: "k", longRoutes: ["plugin", "plugins"] },
  // The older generic endpoint (compat-route.ts); deliberately absent from Init and from routesFor.
  compat: { route: "call", longRoutes: ["tool"] },
} as const;

export type RouteMatch =
  { kind: "tool"; tool: AnyToolDefinition } | { kind: "gateway"; name: keyof typeof GATEWAY_ROUTES };

export interface RouteTable {
  match(route: string): RouteMatch | undefined;
  /** Compact routes usable on a base, for unknown_route guidance. */
  routesFor(base: CapabilityBase): string[];
  tools: AnyToolDefinition[];
}

export function createRouteTable(tools: AnyToolDefinition[]): RouteTable {
  const byName = new Map<string, RouteMatch>();
  for (const tool of tools) {
    for (const name of [tool.route, tool.id, ...tool.longRoutes]) {
      if (byName.has(name)) throw new Error(`route ${name} is declared twice`);
      byName.set(name, { kind: "tool", tool });
    }
  }
  for (const [name, spec] of Object.entries(GATEWAY_ROUTES) as Array<
    [keyof typeof GATEWAY_ROUTES, { route: string; longRoutes: readonly string[] }]
  >) {
    for (const alias of [spec.route, ...spec.longRoutes]) byName.set(alias, { kind: "gateway", name });
  }
  return {
    tools,
    match: (route) => byName.get(route),
    routesFor: (base) => [
      ...tools.filter((t) => (t.capability === "read") === (base === "r")).map((t) => `/${t.route} (${t.id})`),
      "/z (range replay)",
      "/k (plugins)",
    ],
  };
}
