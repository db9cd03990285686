// One stdio relay's connection on the MCP socket: a hello that presents the capability, then newline-delimited
// JSON-RPC served by one McpServer for the whole connection (the SDK's serveStdio over this socket). The
// capability is authenticated again for every message: a line it no longer opens is refused unrun (the relay
// follows a rotation and sends it again); a change of the tool list moves the relay to HTTP. Every tool call runs
// through the same runner, journal and activity log as over HTTP (server.ts). At most MCP_SOCKET_MAX_IN_FLIGHT
// requests at once (socket-slots.ts); a 2025-era batch is answered in one line (socket-batch.ts). Protocol:
// socket-protocol.ts.
import type net from "node:net";
import { parseJSONRPCMessage, type JSONRPCMessage, type Transport } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import type { Authenticated, UnknownTokenThrottle } from "../edge/capability.js";
import {
  batchTooLargeMessage,
  MCP_MAX_BATCH_SIZE,
  MCP_MAX_BODY_BYTES,
  MCP_SOCKET_MAX_IN_FLIGHT,
  tooLargeMessage,
} from "./limits.js";
import { BatchAnswers } from "./socket-batch.js";
import { DirectCalls } from "./socket-direct-call.js";
import { RequestSlots } from "./socket-slots.js";
import { createMcpServer, listingKeyOf, type McpDeps, type McpHandlerContext, type McpScope } from "./server.js";
import {
  BEARER_KEY,
  CONTROL_PREFIX,
  controlLine,
  HELLO_KEY,
  idOfHead,
  MOVED_KEY,
  READY_KEY,
  REFUSED_KEY,
  SOCKET_PROTOCOL_VERSION,
  UNAUTHORIZED_KEY,
} from "./socket-protocol.js";

export interface McpSocketDeps extends McpDeps {
  authenticate: (token: string) => Authenticated | undefined;
  /** The data plane's unknown-token throttle (bridge.ts): a refused hello or line is counted and held as a 404 is. */
  unknownTokens: UnknownTokenThrottle;
}

/** Every socket client is one source for the throttle: a Unix socket has no peer address to tell them apart. */
export const SOCKET_THROTTLE_SOURCE = "unix:mcp.sock";

/** How long a new connection may take to present its hello before it is closed. */
const HELLO_TIMEOUT_MS = 10_000;
/** The first bytes of an oversized line kept to find its id (as the relay does). */
const ID_SCAN_BYTES = 4096;
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const METHOD_NOT_FOUND = -32601;
const TRANSPORT_REFUSAL = -32000;
/** As over HTTP (http.ts): a stateless-era tool list cannot be streamed; the relay's client gets the same answer. */
const STREAM_ONLY_METHODS = new Set(["subscriptions/listen"]);

const scopeOf = (auth: Authenticated): McpScope => ({ ...auth, via: "stdio" });

type RpcId = string | number;

/** One unit of the connection's input, handled in order as request slots allow. */
type Unit =
  | { kind: "line"; text: string }
  | { kind: "too_large"; id: RpcId | null }
  | { kind: "item"; value: unknown; scope: McpScope; batched: boolean };

/**
 * The wire transport serveStdio owns: line framing over the socket, the control lines, and the per-message
 * capability check. Requests it delivers carry their authenticated scope in `scopes`, keyed by JSON-RPC id until
 * the answer leaves. At most MCP_SOCKET_MAX_IN_FLIGHT requests are in the bridge at once (socket-slots.ts): at
 * the bound the lines already read wait in `units` and the socket is not read until a slot frees.
 */
class SocketWire implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  readonly scopes = new Map<RpcId, McpScope>();
  readonly slots = new RequestSlots(MCP_SOCKET_MAX_IN_FLIGHT, () => this.pump());
  private readonly batches = new BatchAnswers((line) => void this.write(`${line}\n`));
  private units: Unit[] = [];
  private pumping = false;
  private paused = false;
  private chunks: Buffer[] = [];
  private size = 0;
  private oversizedHead: Buffer | undefined;
  private closed = false;
  private epoch = 0;
  private moved = false;

  constructor(
    private readonly socket: net.Socket,
    private readonly deps: McpSocketDeps,
    private bearer: string,
    private readonly listingKey: string,
    private readonly direct: DirectCalls,
  ) {}

  async start(): Promise<void> {
    this.socket.on("data", this.onData);
    this.socket.on("end", this.onEnd);
    this.socket.on("close", this.onEnd);
    this.socket.on("error", (error) => this.onerror?.(error));
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if ("id" in message && message.id !== undefined && !("method" in message)) {
      const id = message.id as RpcId;
      this.scopes.delete(id);
      this.direct.sawAnswer(message);
      const json = JSON.stringify(message);
      // The slot frees once the answer is written out (a peer that reads nothing holds its requests' slots).
      if (!this.batches.answer(id, json)) await this.write(`${json}\n`);
      this.slots.answered(id);
      return;
    }
    await this.write(`${JSON.stringify(message)}\n`);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.socket.off("data", this.onData);
    this.scopes.clear();
    this.units.length = 0;
    this.slots.clear();
    this.socket.end();
    this.onclose?.();
  }

  private readonly write = (text: string): Promise<void> => {
    if (this.closed || this.socket.destroyed) return Promise.resolve();
    return new Promise((resolve) => {
      if (this.socket.write(text)) resolve();
      else this.socket.once("drain", resolve).once("close", resolve);
    });
  };

  private readonly onEnd = () => void this.close();

  private readonly onData = (chunk: Buffer) => {
    let data = chunk;
    for (;;) {
      const newline = data.indexOf(0x0a);
      const part = newline < 0 ? data : data.subarray(0, newline);
      if (this.oversizedHead) {
        if (this.oversizedHead.length < ID_SCAN_BYTES)
          this.oversizedHead = Buffer.concat([this.oversizedHead, part.subarray(0, ID_SCAN_BYTES)]);
      } else if (this.size + part.length > MCP_MAX_BODY_BYTES) {
        this.oversizedHead = Buffer.concat([...this.chunks, part]).subarray(0, ID_SCAN_BYTES);
        this.chunks = [];
        this.size = 0;
      } else if (part.length > 0) {
        this.chunks.push(part);
        this.size += part.length;
      }
      if (newline < 0) break;
      data = data.subarray(newline + 1);
      if (this.oversizedHead) {
        this.units.push({ kind: "too_large", id: idOfHead(this.oversizedHead.toString("utf8")) });
        this.oversizedHead = undefined;
      } else {
        // A line that came in one chunk (nearly every line) is decoded where it lies, without a copy.
        const line = (this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.size)).toString(
          "utf8",
        );
        this.chunks = [];
        this.size = 0;
        this.units.push({ kind: "line", text: line.endsWith("\r") ? line.slice(0, -1) : line });
      }
    }
    this.pump();
  };

  /** Handles the units read so far while a request slot is free; stops reading the socket while one waits. */
  private pump(): void {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.units.length > 0 && !this.slots.full && !this.closed) this.handle(this.units.shift()!);
    } finally {
      this.pumping = false;
    }
    const wait = this.units.length > 0 && !this.closed;
    if (wait && !this.paused) this.socket.pause();
    else if (!wait && this.paused) this.socket.resume();
    this.paused = wait;
  }

  /** Lets the socket flow once the connection is served, unless the lines already read fill every slot. */
  startReading(): void {
    if (!this.paused) this.socket.resume();
  }

  private handle(unit: Unit): void {
    if (unit.kind === "too_large") return void this.writeError(unit.id, TRANSPORT_REFUSAL, tooLargeMessage);
    if (unit.kind === "item") return this.deliver(unit.value, unit.scope, unit.batched);
    this.onLine(unit.text);
  }

  private writeError(id: RpcId | null, code: number, message: string): Promise<void> {
    return this.write(`${errorJson(id, code, message)}\n`);
  }

  private onLine(line: string): void {
    if (line.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      void this.writeError(
        null,
        PARSE_ERROR,
        "Parse error: the line is not valid JSON. Send one JSON-RPC message per line as UTF-8 JSON.",
      );
      return;
    }
    if (line.startsWith(CONTROL_PREFIX)) {
      const bearer = (value as Record<string, unknown>)[BEARER_KEY];
      if (typeof bearer === "string") {
        this.bearer = bearer;
        this.epoch++;
      }
      return;
    }
    if (this.moved) return void this.write(controlLine(MOVED_KEY, { line }));
    const auth = this.deps.authenticate(this.bearer);
    if (!auth) {
      // Held as the data plane holds an unknown token's 404 (a rotation's few stale lines pass at once).
      const refusal = controlLine(REFUSED_KEY, { epoch: this.epoch, line });
      return this.deps.unknownTokens.refuse(
        SOCKET_THROTTLE_SOURCE,
        () => void this.write(refusal),
        () => this.closed || this.socket.destroyed,
      );
    }
    if (listingKeyOf(auth) !== this.listingKey) {
      this.moved = true;
      return void this.write(controlLine(MOVED_KEY, { line }));
    }
    const scope = scopeOf(auth);
    if (!Array.isArray(value)) return this.deliver(value, scope, false);
    const batched = this.direct.pinnedToLegacy;
    if (batched && value.length > MCP_MAX_BATCH_SIZE) {
      // Refused whole, nothing run, with the HTTP leg's bytes (legacy-exchange.ts): its answers would all be held.
      return void this.write(
        `${JSON.stringify({ jsonrpc: "2.0", error: { code: INVALID_REQUEST, message: batchTooLargeMessage }, id: null })}\n`,
      );
    }
    if (batched) this.openBatch(value);
    // Each item waits for a request slot in turn, with the scope this line authenticated, ahead of later lines.
    this.units = [...value.map((item): Unit => ({ kind: "item", value: item, scope, batched })), ...this.units];
  }

  /**
   * A 2025-era batch is answered as one line (socket-batch.ts), in the order of its requests; an item that is not a
   * JSON-RPC message, or a method that needs a stream, has its error in that line.
   */
  private openBatch(items: unknown[]): void {
    const entries: Array<{ id: RpcId } | { error: string }> = [];
    for (const item of items) {
      const message = asMessage(item);
      if (!message) entries.push({ error: errorJson(idOf(item), INVALID_REQUEST, INVALID_REQUEST_TEXT) });
      else if (!("method" in message && "id" in message)) continue;
      else if (STREAM_ONLY_METHODS.has(message.method))
        entries.push({ error: errorJson(message.id, METHOD_NOT_FOUND, streamOnlyText(message.method)) });
      else entries.push({ id: message.id });
    }
    this.batches.open(entries);
  }

  private deliver(value: unknown, scope: McpScope, batched: boolean): void {
    // A plain tools/call is answered without the SDK's dispatch (socket-direct-call.ts); anything else goes to it.
    // A batch's calls all go to the SDK, as over HTTP, so that their answers are collected in one place.
    if (!batched) {
      const taken = this.direct.take(value, scope, this.write, (id) => this.slots.done(id));
      if (taken !== undefined) return this.slots.take(taken, true);
    }
    const message = asMessage(value);
    if (!message) {
      // In a batch the item's error is already in its answer line (openBatch).
      if (!batched) void this.writeError(idOf(value), INVALID_REQUEST, INVALID_REQUEST_TEXT);
      return;
    }
    // A valid message with a method and an id is a request (the others: notifications, answers).
    if ("method" in message && "id" in message) {
      if (STREAM_ONLY_METHODS.has(message.method)) {
        // In a batch its error is already in the answer line (openBatch).
        if (!batched) void this.writeError(message.id, METHOD_NOT_FOUND, streamOnlyText(message.method));
        return;
      }
      this.scopes.set(message.id, scope);
      this.slots.take(message.id);
      if (message.method === "initialize") this.direct.sawInitialize(message.id);
    }
    this.onmessage?.(message);
    // A cancelled request is never answered (MCP), so its scope would otherwise stay for the connection's life.
    if ("method" in message && message.method === "notifications/cancelled" && !("id" in message)) {
      const requestId = (message.params as { requestId?: unknown } | undefined)?.requestId;
      if (typeof requestId === "string" || typeof requestId === "number") {
        this.scopes.delete(requestId);
        this.direct.cancel(requestId);
        this.batches.cancel(requestId);
        this.slots.cancelled(requestId);
      }
    }
  }
}

const INVALID_REQUEST_TEXT = "Invalid Request: each line must be one JSON-RPC 2.0 request, notification or response.";
const streamOnlyText = (method: string) =>
  `${method} needs a stream, and this endpoint is stateless and answers JSON only; call tools/list again to see the current tools.`;
const errorJson = (id: RpcId | null, code: number, message: string) =>
  JSON.stringify({ jsonrpc: "2.0", id, error: { code, message } });

function asMessage(value: unknown): JSONRPCMessage | undefined {
  try {
    return parseJSONRPCMessage(value);
  } catch {
    return undefined;
  }
}

function idOf(value: unknown): RpcId | null {
  const id = (value as { id?: unknown } | null)?.id;
  return typeof id === "string" || typeof id === "number" ? id : null;
}

/** Reads the hello line (bounded in size and time); undefined when the peer sent something else or went away. */
function readHello(socket: net.Socket): Promise<{ bearer: string; rest: Buffer } | undefined> {
  return new Promise((resolve) => {
    let buffered = Buffer.alloc(0);
    const done = (result: { bearer: string; rest: Buffer } | undefined) => {
      clearTimeout(timer);
      // Nothing may flow while no listener is attached: the wire's starts reading where the hello ended.
      socket.pause();
      socket.off("data", onData);
      socket.off("close", onClose);
      resolve(result);
    };
    const onClose = () => done(undefined);
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      const newline = buffered.indexOf(0x0a);
      if (newline < 0) {
        if (buffered.length > ID_SCAN_BYTES) done(undefined);
        return;
      }
      let hello: unknown;
      try {
        hello = (JSON.parse(buffered.subarray(0, newline).toString("utf8")) as Record<string, unknown>)[HELLO_KEY];
      } catch {
        hello = undefined;
      }
      const bearer = (hello as { bearer?: unknown } | undefined)?.bearer;
      done(typeof bearer === "string" ? { bearer, rest: buffered.subarray(newline + 1) } : undefined);
    };
    const timer = setTimeout(() => done(undefined), HELLO_TIMEOUT_MS);
    socket.on("data", onData);
    socket.once("close", onClose);
  });
}

/** Serves one accepted connection until either side closes it or the bridge stops. */
export async function serveMcpSocketConnection(deps: McpSocketDeps, socket: net.Socket): Promise<void> {
  const hello = await readHello(socket);
  const auth = hello && deps.authenticate(hello.bearer);
  if (!hello || !auth) {
    const refuse = () => void socket.end(controlLine(UNAUTHORIZED_KEY, {}));
    // A hello with an unknown capability is a guess like any other; a connection that sent none is only closed.
    if (hello) deps.unknownTokens.refuse(SOCKET_THROTTLE_SOURCE, refuse, () => socket.destroyed);
    else refuse();
    return;
  }
  const wire = new SocketWire(socket, deps, hello.bearer, listingKeyOf(auth), new DirectCalls(deps, scopeOf(auth)));
  // Every call runs with the scope its own line authenticated; none (a request cancelled before it started) is
  // refused rather than run with the hello's, which a rotation may have revoked since.
  const resolveScope = (ctx: McpHandlerContext) => {
    const scope = ctx.mcpReq.id === undefined ? undefined : wire.scopes.get(ctx.mcpReq.id);
    if (!scope)
      throw new Error("this request has no authenticated capability (cancelled before it started); send it again");
    return scope;
  };
  // A tool handler holds its request slot until it returns, also when its call was cancelled (socket-slots.ts).
  const onCall = (ctx: McpHandlerContext) => {
    const id = ctx.mcpReq.id;
    if (id === undefined) return () => {};
    wire.slots.started(id);
    return () => wire.slots.ended(id);
  };
  const handle = serveStdio(() => createMcpServer(deps, scopeOf(auth), resolveScope, onCall), {
    transport: wire,
    onerror: (error) => deps.log.debug("MCP socket connection", { error: error.message }),
  });
  const stop = () => void handle.close().catch(() => {});
  deps.signal.addEventListener("abort", stop, { once: true });
  socket.once("close", () => deps.signal.removeEventListener("abort", stop));
  socket.write(controlLine(READY_KEY, { v: SOCKET_PROTOCOL_VERSION }));
  // Lines that came in the same packet as the hello, before anything read later.
  if (hello.rest.length > 0) socket.emit("data", hello.rest);
  wire.startReading();
}
