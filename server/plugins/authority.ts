// A plugin call's authority: derived from the invoking session for every call, narrowed on request, never
// widened. The narrowed root is resolved by the same descriptor walk as every agent path, so a symlink or
// ".." cannot take it outside the project.
import fs from "node:fs";
import { ErrorCode, ToolError } from "../errors.js";
import type { ProjectScope } from "../kernel/tool/definition.js";
import { resolveInsideRoot, VIRTUAL_ROOT } from "../sandbox/paths.js";
import type { AuthorityRequest, PluginCallAuthority } from "./definition.js";

export function deriveAuthority(project: ProjectScope): PluginCallAuthority {
  return Object.freeze({
    root: project.root,
    display: VIRTUAL_ROOT,
    permissions: Object.freeze({ ...project.permissions }),
  });
}

/**
 * The authority a call runs with: `granted` itself, or a narrower one; a wider request throws. A narrowed root
 * is a folder inside granted.root, named as an agent names paths ("/project/sub" or "sub").
 */
export function narrowAuthority(
  granted: PluginCallAuthority,
  request: AuthorityRequest | undefined,
  who: string,
): PluginCallAuthority {
  if (!request) return granted;
  const permissions = { ...granted.permissions };
  for (const name of ["write", "terminal", "web"] as const) {
    const wanted = request.permissions?.[name];
    if (wanted === undefined) continue;
    if (wanted && !granted.permissions[name]) {
      throw new ToolError(
        ErrorCode.pluginAuthorityExceeded,
        `${who} asked for the project's ${name} permission, which this session does not have; nothing was run. The operator can turn it on in the control plane.`,
        {
          detail: { tool: who, permission: name },
          retryable: false,
          agentAction: "enable_in_control_plane",
        },
      );
    }
    permissions[name] = wanted;
  }
  let { root, display } = granted;
  if (request.root !== undefined) {
    let resolved;
    try {
      resolved = resolveInsideRoot(granted.root, request.root);
      if (!resolved.exists || !fs.statSync(resolved.absolute).isDirectory())
        throw new ToolError(ErrorCode.pathNotFound, `${request.root} is not a folder.`);
    } catch (error) {
      if (!(error instanceof ToolError)) throw error;
      throw new ToolError(
        ErrorCode.pluginAuthorityExceeded,
        `${who} asked to work in ${request.root}, which is not a folder inside ${granted.display}; nothing was run. Give a folder inside the project.`,
        {
          detail: { tool: who, root: request.root, cause: error.code },
          retryable: false,
        },
      );
    }
    root = resolved.absolute;
    display = resolved.display;
  }
  return Object.freeze({ root, display, permissions: Object.freeze(permissions) });
}
