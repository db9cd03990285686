// `urlbridge mcp --session <id|name>`: resolves the session through the control API, takes the capability
// its MCP view hands out (mutation when the project allows changes, else read) and relays stdio to the bridge:
// through its MCP socket in the state dir when it listens there, else over HTTP. MCP clients start it with an
// environment of their own (Codex passes none, Gemini drops *TOKEN* variables), so the printed command names the
// state dir and the control plane's URL as flags (--state-dir, --control-url) instead of URLBRIDGE_* variables.
import type { Config } from "../config.js";
import type { SessionMcpView } from "../control/api-types.js";
import type { ParsedCommand } from "./args.js";
import { CliError, usageError } from "./cli-error.js";
import { createControlClient, type ControlClient } from "./control-client.js";
import { findSession } from "./find-session.js";
import { hint } from "./commands.js";
import { runMcpRelay } from "./mcp-relay.js";
import { mcpSocketPath } from "../mcp/socket-protocol.js";

/** The environment the relay loads its settings from: the flags, where given, in place of URLBRIDGE_* variables. */
export function mcpCommandEnv(cmd: ParsedCommand, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out = { ...env };
  if (cmd.flags.stateDir !== undefined) out.URLBRIDGE_STATE_DIR = cmd.flags.stateDir;
  if (cmd.flags.controlUrl !== undefined) {
    let url: URL;
    try {
      url = new URL(cmd.flags.controlUrl);
    } catch {
      throw usageError(
        `--control-url must be the control plane's URL, e.g. http://127.0.0.1:47433; got ${JSON.stringify(cmd.flags.controlUrl)}`,
      );
    }
    if (url.protocol !== "http:" || !url.port)
      throw usageError(
        `--control-url must be http://<host>:<port>, as \`urlbridge session create\` prints it; got ${JSON.stringify(cmd.flags.controlUrl)}`,
      );
    out.URLBRIDGE_CONTROL_HOST = url.hostname.replace(/^\[|\]$/g, "");
    out.URLBRIDGE_CONTROL_PORT = url.port;
  }
  return out;
}

async function mcpViewOf(client: ControlClient, sessionId: string): Promise<SessionMcpView> {
  const view = await client.request<SessionMcpView>("GET", `/api/sessions/${encodeURIComponent(sessionId)}/mcp`);
  if (!view.enabled) {
    throw new CliError(
      `session "${view.sessionName}" is disabled; enable it on the UI's Sessions page, then start \`urlbridge mcp\` again`,
    );
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
