// Which tools a project's permissions switch on: one rule for the tool kernel (run-tool.ts, the one check per
// call), and which of those a session is shown: the Init contract, the manifest, MCP tools/list and the control
// plane's session view.
import { ErrorCode, ToolError } from "../../errors.js";
import type { AnyToolDefinition, ProjectScope } from "./definition.js";

type Permissions = ProjectScope["permissions"];

/** The mutation base exists when the project allows writing files or running commands. */
export function mutationEnabled(permissions: Permissions): boolean {
  return permissions.write || permissions.terminal;
}

/** A tool with a permission needs it; mutation-base helpers (stage, blob status, result) need either one. */
export function isToolEnabled(tool: AnyToolDefinition, permissions: Permissions): boolean {
  if (tool.permission) return permissions[tool.permission];
  return tool.capability === "read" || tool.openToReadOnly === true || mutationEnabled(permissions);
}

/**
 * Whether a session is shown the tool: enabled by the project's permissions and, for a tool only a worktree session
 * can use (git_commit), the session works in a worktree of its own. Calls are checked by isToolEnabled alone, so a
 * session that lost its worktree still reaches the tool and gets its own refusal (not_a_worktree_session).
 */
export function isToolListed(tool: AnyToolDefinition, permissions: Permissions, worktreeSession: boolean): boolean {
  return isToolEnabled(tool, permissions) && (tool.worktreeOnly !== true || worktreeSession);
}

/** Throws tool_not_enabled naming the permission the operator would have to turn on. */
export function assertToolEnabled(tool: AnyToolDefinition, permissions: Permissions): void {
  if (isToolEnabled(tool, permissions)) return;
  const [permission, hint] = tool.permission
    ? [
        tool.permission,
        `${tool.id} needs the project's ${tool.permission} permission, which is off. The operator can turn it on in the control plane.`,
      ]
    : [
        "write|terminal",
        `${tool.id} needs the project's write or terminal permission; both are off. The operator can turn one on in the control plane.`,
      ];
  throw new ToolError(ErrorCode.toolNotEnabled, hint, {
    detail: { tool: tool.id, permission },
    retryable: false,
    agentAction: "enable_in_control_plane",
  });
}
