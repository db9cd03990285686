// The gateway's own routes on either base, beside the tools: /manifest (every enabled tool with its
// parameters and an example) and /k (installed plugins, or one plugin's status and tools).
import { z } from "zod";
import { ErrorCode, ToolError } from "../errors.js";
import { isToolEnabled, mutationEnabled } from "../kernel/tool/permissions.js";
import type { RunOutcome } from "../kernel/tool/runner.js";
import type { AnyToolDefinition, CapabilityBase, ProjectScope, ToolResult } from "../kernel/tool/definition.js";
import type { PluginHost } from "../plugins/host.js";
import { validateInput } from "../kernel/tool/validate-input.js";
import { bindQueryInput } from "../url-grammar/bind.js";
import { editRequestUrl, type RequestUrl } from "../url-grammar/request-url.js";

const pluginQuerySchema = z.object({ plugin: z.string().min(1).max(64).optional() });

export function manifestOf(tools: AnyToolDefinition[], permissions: ProjectScope["permissions"], baseUrl: (b: CapabilityBase) => string): ToolResult {
  return {
    ok: true,
    bases: { r: baseUrl("r"), ...(mutationEnabled(permissions) ? { m: baseUrl("m") } : {}) },
    tools: tools
      .filter((t) => isToolEnabled(t, permissions))
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

export async function answerPluginsRoute(plugins: PluginHost, url: RequestUrl): Promise<RunOutcome> {
  const candidate = bindQueryInput({ schema: pluginQuerySchema, binding: {}, url });
  const { plugin } = validateInput<{ plugin?: string }>(pluginQuerySchema, candidate, { repair: (edit) => editRequestUrl(url, edit) });
  if (plugin === undefined) return { body: { ok: true, plugins: await plugins.summaries() } };
  const found = plugins.get(plugin);
  if (!found) {
    throw new ToolError(ErrorCode.unknownPlugin, `No plugin "${plugin}" is installed. /k lists the installed plugins.`, {
      detail: { plugin },
      repair: editRequestUrl(url, { drop: ["plugin"] }),
    });
  }
  return {
    body: {
      ok: true,
      plugin: found.id,
      status: await found.status(),
      tools: found.tools.map((t) => ({ id: t.id, capability: t.capability, description: t.description, params: Object.keys(t.schema.shape) })),
    },
  };
}
