// Which MCP tools a capability lists, by name: the specs in listing order and the filter over them. Kept apart
// from server.ts (the SDK's McpServer) so the bridge can name a session's MCP tools without loading the MCP SDK,
// which start-up never needs (docs/PERFORMANCE.md, "Start-up and memory").
import type { AnyToolDefinition, ProjectPermissions } from "../kernel/tool/definition.js";
import { isToolListed } from "../kernel/tool/permissions.js";
import { fileTools } from "./tools/files.js";
import { gitTools } from "./tools/git.js";
import { journalTools } from "./tools/journal.js";
import { reviewTools } from "./tools/review.js";
import { readTools } from "./tools/read.js";
import { searchTools } from "./tools/search.js";
import { shellTools } from "./tools/shell.js";
import { shellInputTools } from "./tools/shell-input.js";
import { webTools } from "./tools/web.js";
import type { McpToolSpec } from "./tools/spec.js";

/** Every MCP tool in listing order. */
export const MCP_TOOL_SPECS: readonly McpToolSpec[] = [
  ...readTools,
  ...searchTools,
  ...gitTools,
  ...webTools,
  ...fileTools,
  ...shellTools,
  ...shellInputTools,
  ...journalTools,
  ...reviewTools,
];

/** What decides a capability's listing: read ("r") or mutation ("m"), the project's permissions, a worktree of its own. */
export interface ToolListing {
  base: "r" | "m";
  permissions: ProjectPermissions;
  worktreeSession: boolean;
}

/**
 * read capability: the read tools the project enables (webfetch, websearch need web); mutation capability: every
 * tool the project's permissions enable, git_commit only in a worktree session (permissions.ts isToolListed).
 */
export function listedSpecs(
  listing: ToolListing,
  byId: Map<string, AnyToolDefinition>,
  specs: readonly McpToolSpec[] = MCP_TOOL_SPECS,
): McpToolSpec[] {
  const listed = specs.filter((spec) => {
    const tool = byId.get(spec.kernel);
    if (!tool || !isToolListed(tool, listing.permissions, listing.worktreeSession)) return false;
    return listing.base !== "r" || tool.capability === "read";
  });
  // A mixed plugin tool lists two specs of one name (tools/plugins.ts): the last one listed stands.
  const last = new Map(listed.map((spec) => [spec.name, spec]));
  return listed.filter((spec) => last.get(spec.name) === spec);
}
