// The CLI's operator actions beyond create/rotate, with the UI's parity (issue 32): session enable/disable/delete/rename,
// project edit (permissions, name) and project remove, each one control-API call, answered in one line.
import type { Config } from "../config.js";
import type { Project, SessionView } from "../control/api-types.js";
import type { ParsedCommand } from "./args.js";
import { CliError } from "./cli-error.js";
import { hint, type Print } from "./commands.js";
import { createControlClient, type ControlClient } from "./control-client.js";
import { findSession } from "./find-session.js";
import { formatPermissions, sessionJson } from "./output.js";

const json = (value: unknown) => JSON.stringify(value, null, 2);
const PERMISSIONS = ["write", "terminal", "web"] as const;

/** `--permissions write,terminal` (exactly these on, the rest off) or `none` (read-only), as the UI's edit form sets all three. */
export function parsePermissions(value: string): Record<(typeof PERMISSIONS)[number], boolean> {
  const words = value === "none" ? [] : value.split(",").map((w) => w.trim());
  const unknown = words.find((w) => !(PERMISSIONS as readonly string[]).includes(w));
  if (unknown !== undefined || (words.length === 0 && value !== "none"))
    throw new CliError(
      `--permissions takes a comma-separated list of ${PERMISSIONS.join(", ")}, or none for read-only; got "${value}"`,
    );
  return { write: words.includes("write"), terminal: words.includes("terminal"), web: words.includes("web") };
}

async function findProject(config: Config, client: ControlClient, ref: string): Promise<Project> {
  const projects = await client.request<Project[]>("GET", "/api/projects");
  const found = projects.find((p) => p.id === ref) ?? projects.find((p) => p.name === ref);
  if (!found) throw new CliError(`no project named or with id "${ref}"; see \`${hint(config, "project list")}\``);
  return found;
}

export async function runSessionAction(config: Config, cmd: ParsedCommand, print: Print): Promise<void> {
  const client = createControlClient(config);
  const session = await findSession(client, cmd.args[0]!, hint(config, "session list"));
  const path = `/api/sessions/${encodeURIComponent(session.id)}`;
  if (cmd.command === "session delete") {
    await client.request("DELETE", path);
    print(
      cmd.flags.json
        ? json({ id: session.id, name: session.name, deleted: true })
        : `Deleted session ${session.name} (${session.id}): its URLs no longer work.`,
    );
    return;
  }
  if (cmd.command === "session rename") {
    const renamed = await client.request<SessionView>("PATCH", path, { name: cmd.args[1]! });
    print(
      cmd.flags.json
        ? json(sessionJson(renamed))
        : `Renamed session ${session.name} to ${renamed.name} (${renamed.id}): its URLs are unchanged.` +
            // The stdio relay finds its session by the name its snippet was given (session-mcp.ts).
            `\nAn MCP client started with --session ${session.name} needs --session ${renamed.id} or the new name.`,
    );
    return;
  }
  const action = cmd.command === "session enable" ? "enable" : "disable";
  const updated = await client.request<SessionView>("POST", `${path}/${action}`);
  print(
    cmd.flags.json
      ? json(sessionJson(updated))
      : action === "enable"
        ? `Enabled session ${updated.name} (${updated.id}): its URLs work again.\nInit URL: ${updated.initUrl}`
        : `Disabled session ${updated.name} (${updated.id}): its URLs answer nothing until it is enabled again.\nNext: ${hint(config, `session enable ${updated.id}`)}`,
  );
}

export async function runProjectAction(config: Config, cmd: ParsedCommand, print: Print): Promise<void> {
  const client = createControlClient(config);
  const project = await findProject(config, client, cmd.args[0]!);
  const path = `/api/projects/${encodeURIComponent(project.id)}`;
  if (cmd.command === "project remove") {
    await client.request("DELETE", path);
    print(
      cmd.flags.json
        ? json({ id: project.id, name: project.name, removed: true })
        : `Removed project ${project.name} (${project.id}) and its sessions; the folder ${project.root} is untouched.`,
    );
    return;
  }
  if (cmd.flags.permissions === undefined && cmd.flags.name === undefined)
    throw new CliError(`"urlbridge project edit" needs --permissions <list|none> or --name <new-name>, or both`);
  const body = {
    ...(cmd.flags.name !== undefined ? { name: cmd.flags.name } : {}),
    ...(cmd.flags.permissions !== undefined ? { permissions: parsePermissions(cmd.flags.permissions) } : {}),
  };
  const updated = await client.request<Project & { rotatedSessions?: string[] }>("PATCH", path, body);
  const rotated = updated.rotatedSessions?.length ?? 0;
  print(
    cmd.flags.json
      ? json(updated)
      : `Updated project ${updated.name} (${updated.id}): ${formatPermissions(updated.permissions)}` +
          (rotated > 0
            ? `; rotated ${rotated} session(s), whose old URLs stop working (see ${hint(config, "session list")})`
            : ""),
  );
}
