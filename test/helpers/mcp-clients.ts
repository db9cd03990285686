// Connects the official MCP clients over HTTP to a test bridge (test/helpers/bridge.ts): the v2 client
// (@modelcontextprotocol/client, 2026-07-28 when negotiated) and the v1 client (@modelcontextprotocol/sdk, 2025 era),
// with the capability in the path (/v0/<cap>/mcp) or as a bearer header on /mcp.
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from "@modelcontextprotocol/client";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { startTestBridge, type AgentSession, type TestBridge } from "./bridge.js";

export type McpSdk = "v1" | "v2";
/** Where the capability travels: in the path, or as `Authorization: Bearer <cap>` on /mcp. */
export type CapabilityForm = "path" | "bearer";

export interface McpEndpoint {
  url: string;
  headers: Record<string, string>;
}

/** The capability token of a base URL from Init (`<origin>/v0/<token>`). */
export function tokenOfBase(base: string): string {
  const token = new URL(base).pathname.split("/")[2];
  if (!token) throw new Error(`not a capability base URL: ${base}`);
  return token;
}

/** The endpoint URL and headers a client uses for this capability token. */
export function mcpEndpoint(dataUrl: string, token: string, form: CapabilityForm): McpEndpoint {
  return form === "path"
    ? { url: `${dataUrl}/v0/${token}/mcp`, headers: {} }
    : { url: `${dataUrl}/mcp`, headers: { authorization: `Bearer ${token}` } };
}

export interface ConnectOptions {
  sdk: McpSdk;
  form?: CapabilityForm;
  /** v2 only: "auto" probes for 2026-07-28 (the default here), "legacy" runs the 2025 handshake. */
  negotiation?: "auto" | "legacy";
  /** The fetch the client's transport uses (e.g. one that records every raw response). */
  fetch?: typeof fetch;
}

type ToolsListed = Awaited<ReturnType<ClientV2["listTools"]>>;
type CallParams = Parameters<ClientV2["callTool"]>[0];
type CallResult = Awaited<ReturnType<ClientV2["callTool"]>>;

/** What both clients can do, typed once (the v1 and v2 result types are structurally the same JSON). */
export interface McpTestClient {
  sdk: McpSdk;
  /** The protocol revision the client settled on (e.g. 2026-07-28, 2025-11-25). */
  protocolVersion: string | undefined;
  listTools(): Promise<ToolsListed>;
  callTool(params: CallParams): Promise<CallResult>;
  /** The SDK client itself, for what the uniform face does not cover. */
  raw: ClientV1 | ClientV2;
  close(): Promise<void>;
}

const CLIENT_INFO = { name: "urlbridge-test-client", version: "0.0.0" };

/** Connects one official client to `dataUrl` with this capability token and runs its handshake. */
export async function connectMcpClient(
  dataUrl: string,
  token: string,
  options: ConnectOptions,
): Promise<McpTestClient> {
  const endpoint = mcpEndpoint(dataUrl, token, options.form ?? "path");
  const requestInit = { headers: endpoint.headers };
  const custom = options.fetch ? { fetch: options.fetch } : {};
  if (options.sdk === "v1") {
    const client = new ClientV1(CLIENT_INFO);
    const transport = new TransportV1(new URL(endpoint.url), { requestInit, ...custom });
    await client.connect(transport);
    return {
      sdk: "v1",
      protocolVersion: transport.protocolVersion,
      listTools: () => client.listTools() as Promise<ToolsListed>,
      callTool: (params) => client.callTool(params as Parameters<ClientV1["callTool"]>[0]) as Promise<CallResult>,
      raw: client,
      close: () => client.close(),
    };
  }
  const mode = options.negotiation ?? "auto";
  const client = new ClientV2(CLIENT_INFO, { versionNegotiation: { mode } });
  const transport = new TransportV2(new URL(endpoint.url), { requestInit, ...custom });
  await client.connect(transport);
  return {
    sdk: "v2",
    protocolVersion: client.getNegotiatedProtocolVersion() ?? transport.protocolVersion,
    listTools: () => client.listTools(),
    callTool: (params) => client.callTool(params),
    raw: client,
    close: () => client.close(),
  };
}

export interface McpBridge {
  tb: TestBridge;
  agent: AgentSession;
  /** The read and (when the project allows writes or the terminal) mutation capability tokens. */
  tokens: { r: string; m: string | undefined };
  /** Connects a client with the read ("r") or mutation ("m") capability. */
  connect(base: "r" | "m", options: ConnectOptions): Promise<McpTestClient>;
  endpoint(base: "r" | "m", form: CapabilityForm): McpEndpoint;
  /** Closes every client connect() opened, then the bridge. */
  close(): Promise<void>;
}

export interface McpBridgeOptions {
  write?: boolean;
  terminal?: boolean;
  /** Reuse a state dir (a bridge restart on the same state); see startTestBridge. */
  stateDir?: string;
  env?: Record<string, string>;
}

/** A test bridge with one session, ready for MCP clients. */
export async function startMcpBridge(options: McpBridgeOptions = {}): Promise<McpBridge> {
  const tb = await startTestBridge(options.env ?? {}, options.stateDir ? { stateDir: options.stateDir } : {});
  const agent = await tb.session({ write: options.write ?? true, terminal: options.terminal ?? false });
  return wrapSession(tb, agent);
}

/** The McpBridge face over a bridge and session a test made itself (e.g. after a restart). */
export function wrapSession(tb: TestBridge, agent: AgentSession): McpBridge {
  const tokens = { r: tokenOfBase(agent.r), m: agent.m ? tokenOfBase(agent.m) : undefined };
  const clients: McpTestClient[] = [];
  const tokenFor = (base: "r" | "m") => {
    const token = tokens[base];
    if (!token) throw new Error("this session has no mutation capability: start it with write or terminal");
    return token;
  };
  return {
    tb,
    agent,
    tokens,
    async connect(base, options) {
      const client = await connectMcpClient(tb.bridge.dataUrl, tokenFor(base), options);
      clients.push(client);
      return client;
    },
    endpoint: (base, form) => mcpEndpoint(tb.bridge.dataUrl, tokenFor(base), form),
    async close() {
      await Promise.all(clients.splice(0).map((c) => c.close().catch(() => {})));
      await tb.close();
    },
  };
}

/** The tool names a plain JSON-RPC tools/list over HTTP offers to this bearer (the wire as a client sends it). */
export async function listedToolNames(dataUrl: string, bearer: string): Promise<string[]> {
  const listed = await fetch(`${dataUrl}/mcp`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${bearer}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });
  return ((await listed.json()) as { result: { tools: Array<{ name: string }> } }).result.tools.map((t) => t.name);
}
