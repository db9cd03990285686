// `urlbridge mcp --session <id|name>`: resolves the session through the control API, takes the capability
// its MCP view hands out (mutation when the project allows changes, else read) and relays stdio to the bridge:
// through its MCP socket in the state dir when it listens there, else over HTTP.
import type { Config } from "../config.js";
import type { SessionMcpView } from "../control/api-types.js";
import type { ParsedCommand } from "./args.js";
import { CliError, usageError } from "./cli-error.js";
import { createControlClient, type ControlClient } from "./control-client.js";
import { findSession } from "./find-session.js";
import { hint } from "./commands.js";
import { runMcpRelay } from "./mcp-relay.js";
import { mcpSocketPath } from "../mcp/socket-protocol.js";

async function mcpViewOf(client: ControlClient, sessionId: string): Promise<SessionMcpView> {
  const view = await client.request<SessionMcpView>("GET", `/api/sessions/${encodeURIComponent(sessionId)}/mcp`);
  if (!view.enabled) {
    throw new CliError(`session "${view.sessionName}" is disabled; enable it on the UI's Sessions page, then start \`urlbridge mcp\` again`);
  }
  return view;
}

export async function runMcpCommand(config: Config, cmd: ParsedCommand): Promise<void> {
  const ref = cmd.flags.session;
  if (!ref) throw usageError(`"urlbridge mcp" needs --session <session-name-or-id>`);
  const client = createControlClient(config);
  const session = await findSession(client, ref, hint(config, "session list"));
  const view = await mcpViewOf(client, session.id);
  await runMcpRelay({
    input: process.stdin,
    output: process.stdout,
    warn: (line) => process.stderr.write(`urlbridge mcp: ${line}\n`),
    endpoint: view.localUrl,
    bearer: view.bearer,
    // A rotation mints a new capability for the same session: follow it instead of failing every call.
    refreshBearer: async () => (await mcpViewOf(client, session.id)).bearer,
    restartHint: `check the session on the UI's Sessions page, then restart \`urlbridge mcp --session ${ref}\``,
    socketPath: mcpSocketPath(config.stateDir),
  });
}
