// `urlbridge mcp`: MCP over stdio as a relay into the running bridge. The bridge process owns the journal, the
// per-project write queue and the terminal gate, so this process executes nothing: it reads newline-delimited
// JSON-RPC from stdin and hands each message to the bridge, then writes each JSON-RPC answer to stdout as one
// line. Through the bridge's Unix socket when there is one (mcp-socket-leg.ts: one MCP server for the whole
// connection; reopened after a loss, mcp-socket-route.ts), else by POSTing each message to the bridge's MCP
// endpoint with the session's capability as a bearer. stdout carries JSON-RPC only; errors go to stderr.
import http from "node:http";
import https from "node:https";
import type { Reinitialize } from "./mcp-socket-leg.js";
import { openSocketRoute, type SocketRoute } from "./mcp-socket-route.js";

/** A stdin line past this is discarded unread and answered with an error (the bridge caps bodies lower). */
export const MAX_STDIO_MESSAGE_BYTES = 8 * 1024 * 1024;
/** An answer past this is dropped and replaced by an error (tool outputs are bounded far below it). */
export const MAX_RELAY_RESPONSE_BYTES = 64 * 1024 * 1024;
/** Messages relayed at once; past it stdin is paused until one finishes. */
export const MAX_IN_FLIGHT = 16;
/** How far into an oversized line the relay looks for its id, to answer the right request. */
const ID_SCAN_BYTES = 4096;

// JSON-RPC error codes: the spec's, and one from the implementation-defined range for "the bridge said no".
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const RELAY_ERROR = -32000;

// Mirrors the client side of Streamable HTTP: modern (2026-07-28+) requests carry their protocol version in
// `_meta` and the standard headers are derived from the body; 2025-era requests carry the negotiated version.
const PROTOCOL_VERSION_META_KEY = "io.modelcontextprotocol/protocolVersion";
const MCP_NAME_SOURCE: Record<string, string> = {
  "tools/call": "name",
  "prompts/get": "name",
  "resources/read": "uri",
};
const BASE64_PREFIX = "=?base64?";
const BASE64_SUFFIX = "?=";

type JsonRpcId = string | number | null;

export interface McpRelayOptions {
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
  /** One line for the operator (stderr). */
  warn: (line: string) => void;
  /** The bridge's MCP endpoint on its own machine, e.g. http://127.0.0.1:47432/mcp. */
  endpoint: string;
  bearer: string;
  /** Asked once after the bridge refuses the bearer (a rotated session): the current one, or undefined. */
  refreshBearer?: () => Promise<string | undefined>;
  /** What to tell a client whose session has gone, e.g. the command to restart. */
  restartHint: string;
  /** The bridge's MCP Unix socket (state dir); when it is absent or refuses the hello, every message goes over HTTP. */
  socketPath?: string | undefined;
}

interface Exchange {
  status: number;
  contentType: string;
  body: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** The id of a request (has method and id); undefined for notifications and responses. */
function requestIdOf(message: unknown): JsonRpcId | undefined {
  if (!isRecord(message) || typeof message.method !== "string" || !("id" in message)) return undefined;
  const id = message.id;
  return typeof id === "string" || typeof id === "number" ? id : null;
}

function requestIdsOf(message: unknown): JsonRpcId[] {
  if (Array.isArray(message)) return message.map(requestIdOf).filter((id): id is JsonRpcId => id !== undefined);
  const id = requestIdOf(message);
  return id === undefined ? [] : [id];
}

function looksLikeJsonRpc(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0 && value.every(looksLikeJsonRpc);
  return isRecord(value) && value.jsonrpc === "2.0";
}

function encodeHeaderValue(value: string): string {
  const plain =
    value.length > 0 &&
    value === value.trim() &&
    /^[\t\x20-\x7e]*$/.test(value) &&
    !(value.startsWith(BASE64_PREFIX) && value.endsWith(BASE64_SUFFIX));
  return plain ? value : `${BASE64_PREFIX}${Buffer.from(value, "utf8").toString("base64")}${BASE64_SUFFIX}`;
}

/** Headers a Streamable HTTP client derives from a single modern request's body. */
function bodyDerivedHeaders(message: unknown): Record<string, string> | undefined {
  if (!isRecord(message) || typeof message.method !== "string" || !isRecord(message.params)) return undefined;
  const meta = message.params._meta;
  const version = isRecord(meta) ? meta[PROTOCOL_VERSION_META_KEY] : undefined;
  if (typeof version !== "string") return undefined;
  const headers: Record<string, string> = { "mcp-protocol-version": version, "mcp-method": message.method };
  const field = MCP_NAME_SOURCE[message.method];
  const name = field ? message.params[field] : undefined;
  if (typeof name === "string") headers["mcp-name"] = encodeHeaderValue(name);
  return headers;
}

/** Every JSON-RPC message an SSE body carries (the bridge answers JSON; this is only the spec's other form). */
function sseMessages(body: string): unknown[] {
  const out: unknown[] = [];
  for (const event of body.split(/\r?\n\r?\n/)) {
    const data = event
      .split(/\r?\n/)
      .filter((line) => line.startsWith("data:"))
      .map((line) => line.slice(5).replace(/^ /, ""))
      .join("\n");
    if (!data) continue;
    try {
      out.push(JSON.parse(data));
    } catch {
      // not JSON-RPC: nothing a client could match to a request
    }
  }
  return out;
}

export async function runMcpRelay(options: McpRelayOptions): Promise<void> {
  const endpoint = new URL(options.endpoint);
  const transport = endpoint.protocol === "https:" ? https : http;
  const agent = new transport.Agent({ keepAlive: true, maxSockets: MAX_IN_FLIGHT });
  let bearer = options.bearer;
  let refreshing: Promise<string | undefined> | undefined;
  /** The 2025-era version negotiated by initialize, sent on every later claim-less message. */
  let legacyVersion: string | undefined;
  /** That initialize, which a reopened socket connection replays. */
  let legacyInit: Reinitialize | undefined;
  let outputClosed = false;

  const write = (message: unknown) => {
    if (outputClosed) return;
    options.output.write(`${JSON.stringify(message)}\n`);
  };
  const writeError = (id: JsonRpcId, code: number, message: string) =>
    write({ jsonrpc: "2.0", id, error: { code, message } });

  function post(body: string, message: unknown): Promise<Exchange> {
    const headers: Record<string, string> = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${bearer}`,
      "content-length": String(Buffer.byteLength(body)),
      ...(legacyVersion ? { "mcp-protocol-version": legacyVersion } : {}),
      ...bodyDerivedHeaders(message),
    };
    return new Promise((resolve, reject) => {
      // node:http, not fetch: undici's 300 s header timeout would cut a long shell call the bridge still runs.
      const req = transport.request(endpoint, { method: "POST", headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_RELAY_RESPONSE_BYTES) {
            req.destroy(new Error(`the answer is larger than ${MAX_RELAY_RESPONSE_BYTES} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            contentType: String(res.headers["content-type"] ?? ""),
            body: Buffer.concat(chunks).toString("utf8"),
          }),
        );
        res.on("error", reject);
      });
      req.on("error", reject);
      req.end(body);
    });
  }

  /** What the bridge answered, as JSON-RPC messages; undefined when it refused the capability (opaque 404). */
  function answersOf(exchange: Exchange): unknown[] | undefined {
    const ok = exchange.status >= 200 && exchange.status < 300;
    if (ok && exchange.body.length === 0) return [];
    if (exchange.contentType.includes("text/event-stream")) return sseMessages(exchange.body);
    let parsed: unknown;
    try {
      parsed = JSON.parse(exchange.body);
    } catch {
      parsed = undefined;
    }
    if (looksLikeJsonRpc(parsed)) return [parsed];
    if (exchange.status === 404) return undefined;
    throw new Error(`the bridge answered HTTP ${exchange.status} without JSON-RPC`);
  }

  function noteNegotiatedVersion(message: unknown, answers: unknown[]): void {
    if (!isRecord(message) || message.method !== "initialize" || bodyDerivedHeaders(message)) return;
    for (const answer of answers) {
      if (
        isRecord(answer) &&
        answer.id === message.id &&
        isRecord(answer.result) &&
        typeof answer.result.protocolVersion === "string"
      ) {
        legacyVersion = answer.result.protocolVersion;
        legacyInit = { params: message.params, protocolVersion: legacyVersion };
      }
    }
  }

  /**
   * After the bridge refused `used` (nothing ran: it never looked past the token), asks once for the session's
   * current capability. Messages in flight during a rotation share one refresh; each compares with the bearer it
   * was sent with.
   */
  async function refreshFrom(used: string): Promise<void> {
    if (bearer !== used || !options.refreshBearer) return;
    refreshing ??= options.refreshBearer().finally(() => (refreshing = undefined));
    const fresh = await refreshing.catch((error: unknown) => {
      options.warn(`cannot ask the control plane for the session's current capability: ${(error as Error).message}`);
      return undefined;
    });
    if (fresh) bearer = fresh;
  }
  const refusedText = `the bridge no longer accepts this session's capability (rotated, disabled or deleted); ${options.restartHint}`;

  async function relay(body: string, message: unknown): Promise<void> {
    const ids = requestIdsOf(message);
    try {
      const used = bearer;
      let answers = answersOf(await post(body, message));
      if (answers === undefined && options.refreshBearer) {
        // A 404: safe to send again once with the current capability.
        await refreshFrom(used);
        if (bearer !== used) answers = answersOf(await post(body, message));
      }
      if (answers === undefined) {
        const text = refusedText;
        options.warn(text);
        for (const id of ids) writeError(id, RELAY_ERROR, text);
        return;
      }
      noteNegotiatedVersion(message, answers);
      for (const answer of answers) write(answer);
      // A request the bridge did not answer would leave the client waiting for ever: answer it here.
      const answered = new Set(
        answers
          .flatMap((a): unknown[] => (Array.isArray(a) ? (a as unknown[]) : [a]))
          .map((a) => (isRecord(a) ? a.id : undefined)),
      );
      for (const id of ids.filter((i) => !answered.has(i)))
        writeError(id, RELAY_ERROR, "the bridge sent no answer to this request; see its log");
    } catch (error) {
      const cause = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      const text = `cannot relay to the bridge at ${endpoint.origin} (${cause}); is urlbridge running?`;
      options.warn(text);
      for (const id of ids) writeError(id, RELAY_ERROR, text);
    }
  }

  const leg: SocketRoute | undefined = options.socketPath
    ? await openSocketRoute({
        path: options.socketPath,
        bearer: () => bearer,
        refreshFrom,
        write: (line) => {
          if (!outputClosed) options.output.write(`${line}\n`);
        },
        writeError,
        warn: options.warn,
        viaHttp: relay,
        onAnswer: (request, answer) => noteNegotiatedVersion(request, [answer]),
        requestIdsOf,
        maxAnswerBytes: MAX_RELAY_RESPONSE_BYTES,
        refusedText,
        reinitialize: () => legacyInit,
      })
    : undefined;

  return new Promise((resolve) => {
    const input = options.input;
    const inFlight = new Set<Promise<void>>();
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    /** Set while discarding the rest of an oversized line; holds its first bytes to find the id. */
    let oversized: Buffer | undefined;
    let ended = false;

    const finish = () => {
      if (!ended || inFlight.size > 0) return;
      leg?.close();
      agent.destroy();
      resolve();
    };

    options.output.on("error", () => {
      // The client closed its end: nothing more can be answered.
      outputClosed = true;
      input.pause();
      ended = true;
      finish();
    });

    const dispatch = (line: string) => {
      const text = line.endsWith("\r") ? line.slice(0, -1) : line;
      if (text.trim() === "") return;
      let message: unknown;
      try {
        message = JSON.parse(text);
      } catch {
        options.warn("a stdin line is not JSON; MCP over stdio is one JSON-RPC message per line");
        writeError(null, PARSE_ERROR, "Parse error: each line on stdin must be one JSON-RPC message");
        return;
      }
      const task = (leg ? leg.send(text, message, requestIdsOf(message)) : relay(text, message)).finally(() => {
        inFlight.delete(task);
        if (inFlight.size < MAX_IN_FLIGHT) input.resume();
        finish();
      });
      inFlight.add(task);
      if (inFlight.size >= MAX_IN_FLIGHT) input.pause();
    };

    const rejectOversized = (head: Buffer) => {
      const match = /"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)/.exec(head.toString("utf8"));
      let id: JsonRpcId = null;
      if (match) {
        try {
          id = JSON.parse(match[1]!) as string | number;
        } catch {
          id = null;
        }
      }
      options.warn(`a message larger than ${MAX_STDIO_MESSAGE_BYTES} bytes was dropped`);
      writeError(
        id,
        INVALID_REQUEST,
        `Message too large: at most ${MAX_STDIO_MESSAGE_BYTES} bytes per JSON-RPC message over stdio`,
      );
    };

    input.on("data", (chunk: Buffer | string) => {
      let data = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk;
      for (;;) {
        const newline = data.indexOf(0x0a);
        if (oversized) {
          if (oversized.length < ID_SCAN_BYTES)
            oversized = Buffer.concat([
              oversized,
              data.subarray(0, Math.min(newline < 0 ? data.length : newline, ID_SCAN_BYTES)),
            ]);
          if (newline < 0) return;
          rejectOversized(oversized);
          oversized = undefined;
          data = data.subarray(newline + 1);
          continue;
        }
        if (newline < 0) {
          if (pendingBytes + data.length > MAX_STDIO_MESSAGE_BYTES) {
            oversized = Buffer.concat([...pending, data]).subarray(0, ID_SCAN_BYTES);
            pending = [];
            pendingBytes = 0;
          } else if (data.length > 0) {
            pending.push(data);
            pendingBytes += data.length;
          }
          return;
        }
        const line = Buffer.concat([...pending, data.subarray(0, newline)]);
        pending = [];
        pendingBytes = 0;
        data = data.subarray(newline + 1);
        if (line.length > MAX_STDIO_MESSAGE_BYTES) rejectOversized(line.subarray(0, ID_SCAN_BYTES));
        else dispatch(line.toString("utf8"));
      }
    });
    input.on("end", () => {
      // A last message without its newline is still a message.
      if (oversized) rejectOversized(oversized);
      else if (pendingBytes > 0) dispatch(Buffer.concat(pending).toString("utf8"));
      ended = true;
      finish();
    });
    input.on("error", () => {
      ended = true;
      finish();
    });
  });
}
