// /manifest on either base: every tool the session is shown (the project's permissions, and git_commit only in a
// worktree session), with its parameters and an example.
// (/k, the plugin route, is plugin-route.ts; /z, range replay, is range-route.ts.)
import { isToolListed, mutationEnabled } from "../kernel/tool/permissions.js";
import type { AnyToolDefinition, CapabilityBase, ProjectScope, ToolResult } from "../kernel/tool/definition.js";

export function manifestOf(
  tools: AnyToolDefinition[],
  permissions: ProjectScope["permissions"],
  worktreeSession: boolean,
  baseUrl: (b: CapabilityBase) => string,
): ToolResult {
  return {
    ok: true,
    bases: { r: baseUrl("r"), ...(mutationEnabled(permissions) ? { m: baseUrl("m") } : {}) },
    tools: tools
      .filter((t) => isToolListed(t, permissions, worktreeSession))
      .map((t) => ({
        id: t.id,
        route: `/${t.route}`,
        base: t.capability === "read" ? "r" : "m",
        description: t.description,
        params: Object.keys(t.schema.shape),
        ...(t.url.rawField ? { raw: t.url.rawField } : {}),
        example: t.example,
      })),
    gateway: ["/z?last=1&part=0 (range replay)", "/k (plugins)", "/manifest"],
  };
}
