// The operator's side of a started appliance: its control API over HTTP with the operator token as a bearer,
// and the few calls a test needs (add a project, open a session and read its Init, MCP endpoint and bases).

export const DEFAULT_REQUEST_TIMEOUT_MS = 15_000;

export interface UrlbridgeProject {
  id: string;
  name: string;
  root: string;
  permissions: { write: boolean; terminal: boolean };
}

export interface UrlbridgeSessionView {
  id: string;
  projectId: string;
  name: string;
  enabled: boolean;
  generation: number;
  initUrl: string;
}

/** A session as an agent under test uses it: the Init URL, the bases Init names, and the MCP endpoint. */
export interface UrlbridgeSession {
  id: string;
  name: string;
  initUrl: string;
  /** The Init document, parsed. */
  init: Record<string, unknown>;
  /** Read base (bases.r): read tools hang off it, e.g. `${readBase}/r?path=README.md`. */
  readBase: string;
  /** Mutation base (bases.m), or undefined when the project grants neither write nor terminal. */
  mutationBase: string | undefined;
  /** MCP over Streamable HTTP with the capability in the path (no header needed). */
  mcpUrl: string;
  /** `<origin>/mcp`, to be called with `Authorization: Bearer <mcpBearer>`. */
  mcpBearerUrl: string;
  mcpBearer: string;
}

export class UrlbridgeApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    message: string,
  ) {
    super(message);
    this.name = "UrlbridgeApiError";
  }
}

export interface UrlbridgeControlClient {
  /** e.g. http://127.0.0.1:49153 (the control plane's published loopback port). */
  url: string;
  request<T>(method: string, route: string, body?: unknown): Promise<T>;
  addProject(project: { name: string; root: string; write?: boolean; terminal?: boolean }): Promise<UrlbridgeProject>;
  /** Creates a session on a project (name or id) and reads its Init and MCP view. */
  createSession(project: string, name?: string): Promise<UrlbridgeSession>;
  /** The agent's view of an existing session (by id). */
  session(id: string): Promise<UrlbridgeSession>;
  /** Puts `origin` into every URL the bridge hands out (the operator's saved public origin). */
  setPublicOrigin(origin: string): Promise<void>;
}

export function createUrlbridgeControlClient(
  url: string,
  operatorToken: string,
  timeoutMs = DEFAULT_REQUEST_TIMEOUT_MS,
): UrlbridgeControlClient {
  async function request<T>(method: string, route: string, body?: unknown): Promise<T> {
    const res = await fetch(`${url}${route}`, {
      method,
      headers: {
        authorization: `Bearer ${operatorToken}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    const parsed = text ? (JSON.parse(text) as unknown) : undefined;
    if (!res.ok) {
      const error = (parsed as { error?: { code?: string; message?: string } } | undefined)?.error;
      throw new UrlbridgeApiError(
        res.status,
        error?.code,
        `${method} ${route}: HTTP ${res.status} ${error?.code ?? ""} ${error?.message ?? text}`.trim(),
      );
    }
    return parsed as T;
  }

  async function session(id: string): Promise<UrlbridgeSession> {
    const sessions = await request<UrlbridgeSessionView[]>("GET", "/api/sessions");
    const view = sessions.find((s) => s.id === id);
    if (!view) throw new UrlbridgeApiError(404, "not_found", `no session ${id}`);
    const mcp = await request<{ bearer: string; url: string; pathUrl: string }>(
      "GET",
      `/api/sessions/${encodeURIComponent(id)}/mcp`,
    );
    const res = await fetch(view.initUrl, { signal: AbortSignal.timeout(timeoutMs) });
    if (!res.ok)
      throw new UrlbridgeApiError(
        res.status,
        undefined,
        `GET ${view.initUrl}: HTTP ${res.status}; is the data plane published (dataPlane: true)?`,
      );
    const init = (await res.json()) as Record<string, unknown> & { bases: { r: string; m?: string } };
    return {
      id: view.id,
      name: view.name,
      initUrl: view.initUrl,
      init,
      readBase: init.bases.r,
      mutationBase: init.bases.m,
      mcpUrl: mcp.pathUrl,
      mcpBearerUrl: mcp.url,
      mcpBearer: mcp.bearer,
    };
  }

  return {
    url,
    request,
    session,
    addProject: ({ name, root, write = false, terminal = false }) =>
      request<UrlbridgeProject>("POST", "/api/projects", { name, root, permissions: { write, terminal } }),
    async createSession(project, name) {
      const projects = await request<UrlbridgeProject[]>("GET", "/api/projects");
      const found = projects.find((p) => p.id === project) ?? projects.find((p) => p.name === project);
      if (!found) throw new UrlbridgeApiError(404, "not_found", `no project named or with id "${project}"`);
      const created = await request<UrlbridgeSessionView>("POST", "/api/sessions", {
        projectId: found.id,
        ...(name ? { name } : {}),
      });
      return session(created.id);
    },
    async setPublicOrigin(origin) {
      await request("PUT", "/api/tunnel", { publicOrigin: origin });
    },
  };
}
