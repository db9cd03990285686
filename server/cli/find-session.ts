// A session named on the command line, by id or by a unique name, through the control API.
import type { SessionView } from "../control/api-types.js";
import { CliError } from "./cli-error.js";
import type { ControlClient } from "./control-client.js";

/** `listCommand` is how the operator lists sessions here (commands.ts hint), named when nothing matches. */
export async function findSession(client: ControlClient, ref: string, listCommand: string): Promise<SessionView> {
  const sessions = await client.request<SessionView[]>("GET", "/api/sessions");
  const byId = sessions.find((s) => s.id === ref);
  if (byId) return byId;
  const byName = sessions.filter((s) => s.name === ref);
  if (byName.length === 1) return byName[0]!;
  if (byName.length > 1)
    throw new CliError(
      `${byName.length} sessions are named "${ref}"; use the id (${byName.map((s) => s.id).join(", ")})`,
    );
  throw new CliError(`no session named or with id "${ref}"; see \`${listCommand}\``);
}
