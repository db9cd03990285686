// What every action of the plugin works with: the OpenCode API, the settings, and the invoking session's call
// (its authority, exact URLs, shutdown signal and the intent it runs as), plus the lookups every tool repeats.
import { ErrorCode, ToolError } from "../../server/errors.js";
import type { PluginToolContext } from "../../server/plugins/definition.js";
import { type Api, type SessionInfo, urlbridgeMetaOf } from "./api.js";
import { displayOf, insideRoot } from "./authority.js";
import { PLUGIN_ID, type OpenCodeSettings } from "./settings.js";

export interface PluginDeps {
  api: Api;
  settings: OpenCodeSettings;
  /** Group session id per directory (workers.ts), kept per plugin instance. */
  groups: Map<string, Promise<string>>;
}

export interface Call extends PluginDeps {
  ctx: PluginToolContext;
  /** Canonical host path every OpenCode call of this call is confined to. */
  root: string;
}

export function callOf(deps: PluginDeps, ctx: PluginToolContext): Call {
  return { ...deps, ctx, root: ctx.authority.root };
}

/** An exact read-base URL of one of this plugin's tools. */
export function readUrl(call: Call, tool: string, args: Record<string, unknown>): string {
  return call.ctx.urls.to(
    "r",
    "k",
    [
      ["plugin", PLUGIN_ID],
      ["tool", tool],
    ],
    JSON.stringify(args),
  );
}

const notFound = (what: string, id: string) =>
  new ToolError(
    ErrorCode.opencodeNotFound,
    `No ${what} ${id} inside this project (it does not exist, or its directory is outside the approved root). The list action shows what is visible.`,
    {
      detail: { id },
    },
  );

/** A session whose canonical directory is inside the root; anything else is answered as absent. */
export async function visibleSession(call: Call, sessionId: string): Promise<SessionInfo> {
  let session: SessionInfo;
  try {
    session = await call.api.session(call.root, sessionId);
  } catch (error) {
    if (
      error instanceof ToolError &&
      (error.code === ErrorCode.opencodeNotFound || error.code === ErrorCode.opencodeFailed)
    )
      throw notFound("session", sessionId);
    throw error;
  }
  if (!insideRoot(call.root, session.directory)) throw notFound("session", sessionId);
  return session;
}

export async function visibleWorker(
  call: Call,
  sessionId: string,
  kind: "worker" | "swarm" = "worker",
): Promise<SessionInfo> {
  const session = await visibleSession(call, sessionId).catch((error: unknown) => {
    if (error instanceof ToolError && error.code === ErrorCode.opencodeNotFound) throw notFound(kind, sessionId);
    throw error;
  });
  if (urlbridgeMetaOf(session)?.kind !== kind) throw notFound(kind, sessionId);
  return session;
}

/** Sessions of the root's OpenCode project whose directory is inside the root. */
export async function visibleSessions(call: Call): Promise<SessionInfo[]> {
  const sessions = await call.api.sessions(call.root);
  return sessions.filter((s) => insideRoot(call.root, s.directory));
}

export function sessionRow(call: Call, s: SessionInfo) {
  const meta = urlbridgeMetaOf(s);
  return {
    sessionId: s.id,
    title: s.title,
    directory: displayOf(call.ctx.authority, s.directory),
    owner: meta ? ("urlbridge" as const) : ("external" as const),
    ...(meta ? { kind: meta.kind } : {}),
    ...(s.parentID ? { parentId: s.parentID } : {}),
    ...(s.agent ? { agent: s.agent } : {}),
    ...(s.model ? { model: `${s.model.providerID}/${s.model.id}` } : {}),
    created: s.time.created,
    updated: s.time.updated,
  };
}

export function requireField<T>(value: T | undefined, name: string, action: string): T {
  if (value === undefined || value === null || value === "") {
    throw new ToolError(ErrorCode.missingParameter, `"${action}" needs "${name}" in the JSON arguments.`, {
      detail: { parameter: name, action },
    });
  }
  return value;
}
