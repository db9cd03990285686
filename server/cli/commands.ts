// The CLI's commands over the control API: token, project add/list, session create/list/rotate (mcp: mcp-command.ts).
import path from "node:path";
import type { Config } from "../config.js";
import type { Project, SessionMcpView, SessionView } from "../control/api-types.js";
import type { ParsedCommand } from "./args.js";
import { CliError } from "./cli-error.js";
import { findSession } from "./find-session.js";
import { createControlClient, locateOperatorToken, type ControlClient } from "./control-client.js";
import { runningInAppliance } from "../control/session-mcp.js";
import { operatorCommand, startCommand } from "./invocation.js";
import {
  formatMcpSnippets,
  formatPermissions,
  formatProject,
  formatSession,
  formatTable,
  sessionJson,
} from "./output.js";

export type Print = (text: string) => void;

const json = (value: unknown) => JSON.stringify(value, null, 2);

/** `urlbridge <args>` as the operator types it here (docker compose exec, npx in a checkout, ...). */
export function hint(config: Config, args: string): string {
  return operatorCommand(args, config, {
    inAppliance: runningInAppliance(config.stateDir),
    cwd: process.cwd(),
    env: process.env,
  });
}

const start = (config: Config) => startCommand({ inAppliance: runningInAppliance(config.stateDir) });

export function runTokenCommand(config: Config, cmd: ParsedCommand, print: Print): void {
  const located = locateOperatorToken(config);
  if (cmd.flags.show) {
    if (!located.token)
      throw new CliError(
        `no operator token yet: ${located.file} does not exist; start the server once (${start(config)})`,
      );
    print(
      cmd.flags.json
        ? json({ source: located.source, file: located.file ?? null, token: located.token })
        : located.token,
    );
    return;
  }
  if (cmd.flags.json) {
    print(json({ source: located.source, file: located.file ?? null, exists: located.token !== undefined }));
    return;
  }
  if (located.source === "env")
    print(`The operator token comes from URLBRIDGE_OPERATOR_TOKEN.\nPrint it with: ${hint(config, "token --show")}`);
  else if (located.token)
    print(`The operator token is stored in ${located.file}\nPrint it with: ${hint(config, "token --show")}`);
  else print(`No operator token yet: the server generates ${located.file} on its first start (${start(config)}).`);
}

async function findProject(config: Config, client: ControlClient, ref: string): Promise<Project> {
  const projects = await client.request<Project[]>("GET", "/api/projects");
  const found = projects.find((p) => p.id === ref) ?? projects.find((p) => p.name === ref);
  if (!found) throw new CliError(`no project named or with id "${ref}"; see \`${hint(config, "project list")}\``);
  return found;
}

export async function runProjectCommand(config: Config, cmd: ParsedCommand, print: Print): Promise<void> {
  const client = createControlClient(config);
  if (cmd.command === "project add") {
    const [name, root] = cmd.args as [string, string];
    const project = await client.request<Project>("POST", "/api/projects", {
      name,
      root: path.resolve(root),
      permissions: { write: cmd.flags.write, terminal: cmd.flags.terminal, web: cmd.flags.web },
    });
    const shownName = /^[\w.-]+$/.test(project.name) ? project.name : JSON.stringify(project.name);
    print(
      cmd.flags.json
        ? json(project)
        : `Added ${formatProject(project)}\nNext: ${hint(config, `session create ${shownName}`)}`,
    );
    return;
  }
  const projects = await client.request<Project[]>("GET", "/api/projects");
  if (cmd.flags.json) print(json(projects));
  else if (projects.length === 0)
    print(`No projects yet. Add one with: ${hint(config, "project add <name> <root> [--write] [--terminal] [--web]")}`);
  else
    print(
      formatTable(
        ["ID", "NAME", "PERMISSIONS", "ROOT"],
        projects.map((p) => [p.id, p.name, formatPermissions(p.permissions), p.root]),
      ),
    );
}

export async function runSessionCommand(config: Config, cmd: ParsedCommand, print: Print): Promise<void> {
  const client = createControlClient(config);
  if (cmd.command === "session list") {
    const [sessions, projects] = await Promise.all([
      client.request<SessionView[]>("GET", "/api/sessions"),
      client.request<Project[]>("GET", "/api/projects"),
    ]);
    const names = new Map(projects.map((p) => [p.id, p.name]));
    if (cmd.flags.json) print(json(sessions.map(sessionJson)));
    else if (sessions.length === 0)
      print(`No sessions yet. Create one with: ${hint(config, "session create <project>")}`);
    else
      print(
        formatTable(
          ["ID", "NAME", "PROJECT", "STATE", "GEN", "INIT URL"],
          sessions.map((s) => [
            s.id,
            s.name,
            names.get(s.projectId) ?? s.projectId,
            s.enabled ? "enabled" : "disabled",
            String(s.generation),
            s.initUrl,
          ]),
        ) + (sessions[0]!.reachability.warning ? `\n\nWarning: ${sessions[0]!.reachability.warning}` : ""),
      );
    return;
  }
  let session: SessionView;
  let project: Project;
  if (cmd.command === "session create") {
    project = await findProject(config, client, cmd.args[0]!);
    const { base, branch } = cmd.flags;
    const worktree = cmd.flags.worktree || base !== undefined || branch !== undefined;
    session = await client.request<SessionView>("POST", "/api/sessions", {
      projectId: project.id,
      ...(cmd.flags.name ? { name: cmd.flags.name } : {}),
      ...(worktree ? { worktree: { ...(base ? { base } : {}), ...(branch ? { branch } : {}) } } : {}),
    });
  } else {
    const current = await findSession(client, cmd.args[0]!, hint(config, "session list"));
    session = await client.request<SessionView>("POST", `/api/sessions/${encodeURIComponent(current.id)}/rotate`);
    project = await client.request<Project>("GET", `/api/projects/${encodeURIComponent(session.projectId)}`);
  }
  // The MCP view carries the capability an MCP client presents: the same snippets the UI's session view shows.
  const mcp = await client.request<SessionMcpView>("GET", `/api/sessions/${encodeURIComponent(session.id)}/mcp`);
  print(
    cmd.flags.json
      ? json({ ...sessionJson(session), mcp })
      : `${formatSession(session, project)}\n\n${formatMcpSnippets(mcp)}`,
  );
}
