// The few lines the stdio relay (`urlbridge mcp`) and the bridge exchange on the MCP Unix socket besides
// JSON-RPC. Shared by both sides; imports nothing, so the CLI can use it without loading the bridge or the SDK.
//
// relay -> bridge: first line {"urlbridge/hello":{"v":1,"bearer":"<cap>"}}; later {"urlbridge/bearer":"<cap>"}
//                  after a rotation; every other line is one JSON-RPC message from the client, as it came.
// bridge -> relay: {"urlbridge/ready":{"v":1}} once the hello's capability opens a session, else
//                  {"urlbridge/unauthorized":{}} and the end; then JSON-RPC lines, plus
//                  {"urlbridge/refused":{"epoch":n,"line":"..."}} for a line the current capability no longer
//                  opens (nothing ran: the relay may send it again after a new bearer line), and
//                  {"urlbridge/moved":{"line":"..."}} once this capability's tool list changed (permissions):
//                  nothing ran; the relay sends this and every later line over HTTP, where each is listed afresh.
import path from "node:path";

/** The socket's name in the state dir (the directory is 0700, the socket 0600: the bridge's user only). */
export const MCP_SOCKET_FILE = "mcp.sock";
/** sun_path holds 108 bytes on Linux, its last a NUL: a longer path cannot be bound, and the relay uses HTTP. */
export const MAX_SOCKET_PATH_BYTES = 107;
export const SOCKET_PROTOCOL_VERSION = 1;

export const HELLO_KEY = "urlbridge/hello";
export const BEARER_KEY = "urlbridge/bearer";
export const READY_KEY = "urlbridge/ready";
export const UNAUTHORIZED_KEY = "urlbridge/unauthorized";
export const REFUSED_KEY = "urlbridge/refused";
export const MOVED_KEY = "urlbridge/moved";
/** Every control line starts so; a JSON-RPC message never does (its keys are jsonrpc, id, method, result, error). */
export const CONTROL_PREFIX = '{"urlbridge/';

/** Where a bridge with this state dir listens, or undefined when the path is too long to bind. */
export function mcpSocketPath(stateDir: string): string | undefined {
  const file = path.join(stateDir, MCP_SOCKET_FILE);
  return Buffer.byteLength(file) <= MAX_SOCKET_PATH_BYTES ? file : undefined;
}

export const controlLine = (key: string, value: unknown): string => `${JSON.stringify({ [key]: value })}\n`;

/**
 * The id of a JSON-RPC message from its first bytes, for a line too large to parse (both sides refuse those with an
 * error for that id). null when none is found: the answer then carries id null, as JSON-RPC 2.0 §5 allows.
 */
export function idOfHead(head: string): string | number | null {
  const match = /"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)/.exec(head);
  if (!match) return null;
  try {
    return JSON.parse(match[1]!) as string | number;
  } catch {
    return null;
  }
}
