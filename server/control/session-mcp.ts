// GET /api/sessions/:id/mcp: how an MCP client reaches one session. The capability it should present
// (mutation when the project allows changes, else read), both endpoints, the stdio relay's command, the
// client snippets, and the data plane's local URL that `urlbridge mcp` relays to. Operator-only, like the Init URL.
import fs from "node:fs";
import { mutationEnabled } from "../kernel/tool/permissions.js";
import type { Store } from "../store/index.js";
import type { PublicOrigin } from "../tunnel/public-origin.js";
import { ControlError, ControlErrorCode, notFound } from "./errors.js";
import path from "node:path";
import { CLI_PACKAGE_ROOT } from "../cli/invocation.js";
import {
  buildMcpSnippets,
  MCP_HTTP_PATH,
  mcpServerName,
  stdioCommandFor,
  type McpSnippet,
  type RelayPlacement,
} from "./mcp-snippets.js";

export interface SessionMcpView {
  sessionId: string;
  sessionName: string;
  enabled: boolean;
  /** The key the snippets use under `mcp` / `mcpServers`. */
  serverName: string;
  /** Which capability `bearer` is: "mutation" lists every tool the project enables, "read" only read tools. */
  capability: "mutation" | "read";
  bearer: string;
  /** `<public origin>/mcp` (send `Authorization: Bearer <bearer>`). */
  url: string;
  /** `<public origin>/v0/<bearer>/mcp`, for clients that cannot send headers. */
  pathUrl: string;
  /** The data plane on the bridge's own machine: what the stdio relay posts to. */
  localUrl: string;
  stdioCommand: string[];
  snippets: McpSnippet[];
}

/** The image's URLBRIDGE_STATE_DIR (Dockerfile): with /.dockerenv, this bridge is the compose appliance. */
export const APPLIANCE_STATE_DIR = "/var/lib/urlbridge";

/**
 * Whether local clients reach this bridge through `docker compose exec`. Docker creates /.dockerenv in every
 * container; the state dir tells the appliance from a checkout run inside some other container (a dev box, CI).
 */
export const runningInAppliance = (stateDir: string): boolean =>
  stateDir === APPLIANCE_STATE_DIR && fs.existsSync("/.dockerenv");

/** Where this bridge's stdio relay runs: its state dir and the control plane's URL (as the request reached it). */
export interface RelayContext {
  inDocker: boolean;
  /** URLBRIDGE_COMPOSE_PROJECT: the appliance's compose project, which names its container. */
  composeProject?: string | undefined;
  stateDir: string;
  controlUrl: string;
}

/** The relay on this host: this Node, this package's bin, by absolute paths (see stdioCommandFor). */
export function relayPlacement(context: RelayContext): RelayPlacement {
  if (context.inDocker) return { kind: "docker", composeProject: context.composeProject };
  return {
    kind: "host",
    node: process.execPath,
    bin: path.join(CLI_PACKAGE_ROOT, "bin", "urlbridge.js"),
    stateDir: path.resolve(context.stateDir),
    controlUrl: context.controlUrl,
  };
}

export function sessionMcpView(
  store: Store,
  publicOrigin: PublicOrigin,
  id: string,
  relay: RelayContext,
): SessionMcpView {
  const session = store.sessions.get(id);
  if (!session) throw notFound("session", id);
  const project = store.projects.get(session.projectId);
  if (!project) throw notFound("project", session.projectId);
  const caps = store.sessions.capabilitiesFor(session.id, session.generation);
  const capability = mutationEnabled(project.permissions) && caps.mutation ? "mutation" : "read";
  const bearer = capability === "mutation" ? caps.mutation : caps.read;
  // Unreachable after start-up (a database restored without its key rotates every session), but say what to do.
  if (!bearer)
    throw new ControlError(
      ControlErrorCode.internalError,
      `Session "${session.name}" has no readable capability; rotate it.`,
    );
  // A name two sessions share would make `urlbridge mcp --session <name>` refuse: hand out the id instead.
  const nameIsUnique = store.sessions.list().filter((s) => s.name === session.name).length === 1;
  const stdioCommand = stdioCommandFor(nameIsUnique ? session.name : session.id, relayPlacement(relay));
  const origin = publicOrigin.origin();
  const url = `${origin}${MCP_HTTP_PATH}`;
  const pathUrl = `${origin}/v0/${bearer}${MCP_HTTP_PATH}`;
  const serverName = mcpServerName(session.name);
  return {
    sessionId: session.id,
    sessionName: session.name,
    enabled: session.enabled,
    serverName,
    capability,
    bearer,
    url,
    pathUrl,
    localUrl: `${publicOrigin.state().localOrigin}${MCP_HTTP_PATH}`,
    stdioCommand,
    snippets: buildMcpSnippets({ serverName, url, pathUrl, bearer, stdioCommand }),
  };
}
