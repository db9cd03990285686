// Human-readable output of the CLI: aligned tables, the session block with Init URL and prompt, the MCP snippets.
import type { Project, SessionMcpView, SessionView } from "../control/api-types.js";
import { buildInitPrompt } from "../control/init-prompt.js";

export function formatTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd();
  return [line(header), ...rows.map(line)].join("\n");
}

export function formatPermissions(p: Project["permissions"]): string {
  return ["read", ...(p.write ? ["write"] : []), ...(p.terminal ? ["terminal"] : []), ...(p.web ? ["web"] : [])].join(
    ", ",
  );
}

export function formatProject(p: Project): string {
  return [
    `Project ${p.name} (${p.id})`,
    `  root:        ${p.root}`,
    `  permissions: ${formatPermissions(p.permissions)}`,
  ].join("\n");
}

export function formatSession(s: SessionView, project: Project | undefined): string {
  return [
    `Session ${s.name} (${s.id}) · project ${project?.name ?? s.projectId} · generation ${s.generation} · ${s.enabled ? "enabled" : "disabled"}`,
    `Tools over URLs (${s.tools.length}): ${s.tools.join(", ") || "none"}`,
    `Tools over MCP (${s.mcpTools.length}): ${s.mcpTools.join(", ") || "none"}`,
    ...(s.worktree
      ? [
          `Worktree: ${s.worktree.path} on branch ${s.worktree.branch}, from ${s.worktree.baseRef} (${s.worktree.baseCommit.slice(0, 12)})`,
        ]
      : []),
    "",
    ...(s.reachability.warning ? [`Warning: ${s.reachability.warning}`, ""] : []),
    "Init URL:",
    s.initUrl,
    "",
    "Init prompt (paste it into the agent's chat):",
    buildInitPrompt(s.initUrl),
  ].join("\n");
}

/** The MCP client snippets of a session's MCP view (server/control/mcp-snippets.ts), each under its title. */
export function formatMcpSnippets(view: SessionMcpView): string {
  const header = `MCP clients (${view.capability} capability; it is a secret, like the Init URL; see docs/MCP.md):`;
  return [header, ...view.snippets.map((s) => `\n${s.title}:\n${s.text}`)].join("\n");
}

/** The JSON shape for one session: the API's session view plus the Init prompt. */
export function sessionJson(s: SessionView): SessionView & { initPrompt: string } {
  return { ...s, initPrompt: buildInitPrompt(s.initUrl) };
}
