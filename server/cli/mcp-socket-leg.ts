// The stdio relay's fast leg: the client's JSON-RPC lines go as they are to the bridge's MCP Unix socket, where one
// MCP server serves the whole connection, and the bridge's lines come back as they are. No HTTP, no per-message
// server. A line the bridge refuses (the capability rotated) is sent again after the relay learns the new
// capability; a line it moves (the tool list changed) goes over HTTP, as does everything after a lost connection
// (the lines in flight on it are answered with an error, never sent again; mcp-socket-route.ts opens a new leg).
// Protocol: server/mcp/socket-protocol.ts.
import net from "node:net";
import { MCP_MAX_BATCH_SIZE, tooLargeMessage, MCP_MAX_BODY_BYTES } from "../mcp/limits.js";
import {
  BEARER_KEY,
  CONTROL_PREFIX,
  controlLine,
  HELLO_KEY,
  MOVED_KEY,
  READY_KEY,
  REFUSED_KEY,
  SOCKET_PROTOCOL_VERSION,
} from "../mcp/socket-protocol.js";

export type JsonRpcId = string | number | null;

/** How long connecting and the hello may take before the relay uses HTTP instead. */
const OPEN_TIMEOUT_MS = 5000;
const RELAY_ERROR = -32000;

export interface SocketLegOptions {
  path: string;
  /** The capability the relay holds now (it changes after a refresh). */
  bearer: () => string;
  /** Asks for the session's current capability once the one sent (`used`) was refused; shared by every caller. */
  refreshFrom: (used: string) => Promise<void>;
  /** Writes one line (no newline) to the client. */
  write: (line: string) => void;
  writeError: (id: JsonRpcId, code: number, message: string) => void;
  warn: (line: string) => void;
  /** Relays one message over HTTP and writes its answers: for moved lines and after a lost connection. */
  viaHttp: (text: string, message: unknown) => Promise<void>;
  /** Every answer with the request it answers (the relay notes the negotiated version from initialize). */
  onAnswer: (request: unknown, answer: unknown) => void;
  /** The ids of the requests in a message (none for notifications and answers), as the relay reads them. */
  requestIdsOf: (message: unknown) => JsonRpcId[];
  /** The longest line the bridge may answer with. */
  maxAnswerBytes: number;
  refusedText: string;
}

export interface SocketLeg {
  /** Sends one client line; resolves once every request in it is answered here or over HTTP. */
  send(text: string, message: unknown, ids: JsonRpcId[]): Promise<void>;
  /** Whether the connection closed under the relay (not when the bridge moved it to HTTP). */
  readonly lost: boolean;
  close(): void;
}

/** The client's 2025-era initialize, replayed on a new connection so that its one server serves the same era. */
export interface Reinitialize {
  params: unknown;
  /** The revision the first initialize negotiated: a new connection must answer the same, else HTTP goes on. */
  protocolVersion: string;
}

/** The replayed initialize's id: a string no client line on this connection can be waiting with yet. */
const REINITIALIZE_ID = "urlbridge-relay/reinitialize";

/** The id at the end of a single answer as the SDK serialises it; a batch or another order is parsed in full. */
const ANSWER_ID_AT_END = /^\{"(?:result|error)":.*"jsonrpc":"2\.0","id":(-?\d+|"(?:[^"\\]|\\.)*")\}$/s;
/** Requests whose answer the relay reads (initialize: the 2025-era version it negotiated). */
const needsAnswer = (request: unknown) => (request as { method?: unknown } | null)?.method === "initialize";

/** The requests a message cancels (`notifications/cancelled` with params.requestId). */
function cancelledIdsOf(message: unknown): JsonRpcId[] {
  const ids: JsonRpcId[] = [];
  for (const m of Array.isArray(message) ? message : [message]) {
    if (
      m === null ||
      typeof m !== "object" ||
      (m as { method?: unknown }).method !== "notifications/cancelled" ||
      "id" in m
    )
      continue;
    const id = (m as { params?: { requestId?: unknown } }).params?.requestId;
    if (typeof id === "string" || typeof id === "number") ids.push(id);
  }
  return ids;
}

interface Waiter {
  request: unknown;
  done: () => void;
}

/**
 * Connects and presents the capability, then replays `reinitialize` if given (its answer stays here); undefined when
 * there is no socket, the bridge says no or answers another revision (use HTTP).
 */
export function openSocketLeg(
  options: SocketLegOptions,
  reinitialize?: Reinitialize,
  signal?: AbortSignal,
): Promise<SocketLeg | undefined> {
  return new Promise((resolve) => {
    const socket = net.connect(options.path);
    let buffered = Buffer.alloc(0);
    let ready = false;
    const fail = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", fail);
      socket.destroy();
      resolve(undefined);
    };
    const timer = setTimeout(fail, OPEN_TIMEOUT_MS);
    // The relay finished meanwhile: nothing is left to serve.
    signal?.addEventListener("abort", fail, { once: true });
    socket.once("error", fail);
    socket.once("close", fail);
    socket.once("connect", () =>
      socket.write(controlLine(HELLO_KEY, { v: SOCKET_PROTOCOL_VERSION, bearer: options.bearer() })),
    );
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      const newline = buffered.indexOf(0x0a);
      if (newline < 0) return buffered.length > (ready ? options.maxAnswerBytes : 4096) ? fail() : undefined;
      const first = buffered.subarray(0, newline).toString("utf8");
      buffered = buffered.subarray(newline + 1);
      if (!ready) {
        if (!first.startsWith(`{"${READY_KEY}"`)) return fail();
        ready = true;
        if (reinitialize) {
          socket.write(
            `${JSON.stringify({ jsonrpc: "2.0", id: REINITIALIZE_ID, method: "initialize", params: reinitialize.params })}\n`,
          );
          return onData(Buffer.alloc(0));
        }
      } else if (!answersReinitialize(first, reinitialize!.protocolVersion)) {
        return fail();
      } else {
        socket.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
        reinitialize = undefined;
      }
      clearTimeout(timer);
      signal?.removeEventListener("abort", fail);
      socket.off("data", onData);
      socket.off("error", fail);
      socket.off("close", fail);
      socket.pause();
      resolve(createLeg(socket, options, buffered));
    };
    socket.on("data", onData);
  });
}

/** Whether `line` is the answer to the replayed initialize with the revision the client negotiated. */
function answersReinitialize(line: string, protocolVersion: string): boolean {
  try {
    const answer = JSON.parse(line) as { id?: unknown; result?: { protocolVersion?: unknown } };
    return answer.id === REINITIALIZE_ID && answer.result?.protocolVersion === protocolVersion;
  } catch {
    return false;
  }
}

function createLeg(socket: net.Socket, options: SocketLegOptions, rest: Buffer): SocketLeg {
  const waiting = new Map<JsonRpcId, Waiter[]>();
  let sentBearer = options.bearer();
  let epoch = 0;
  /** Set once the bridge moved this connection to HTTP, or the connection was lost: every later line goes there. */
  let overHttp = false;
  let lost = false;
  let closing = false;
  let chunks: Buffer[] = [];
  let size = 0;

  /** The oldest waiter for `id`, taken out: it is answered exactly once. */
  const take = (id: JsonRpcId): Waiter | undefined => {
    const list = waiting.get(id);
    const waiter = list?.shift();
    if (list && list.length === 0) waiting.delete(id);
    return waiter;
  };
  const settle = (id: JsonRpcId, answer?: unknown) => {
    const waiter = take(id);
    if (!waiter) return;
    if (answer !== undefined) options.onAnswer(waiter.request, answer);
    waiter.done();
  };

  const onAnswerLine = (line: string) => {
    options.write(line);
    // The SDK writes an answer's id last ({"result":...,"jsonrpc":"2.0","id":7}): read it there instead of parsing
    // the whole answer, unless the request needs its answer read (initialize: the negotiated version).
    const tail = ANSWER_ID_AT_END.exec(line);
    if (tail) {
      const id = JSON.parse(tail[1]!) as string | number;
      const waiter = waiting.get(id)?.[0];
      if (waiter && !needsAnswer(waiter.request)) return settle(id);
    }
    let answer: unknown;
    try {
      answer = JSON.parse(line);
    } catch {
      return;
    }
    for (const item of Array.isArray(answer) ? answer : [answer]) {
      if (item === null || typeof item !== "object" || "method" in item) continue;
      const id = (item as { id?: unknown }).id;
      if (typeof id === "string" || typeof id === "number") settle(id, item);
      // A request whose id is not a string or number is answered with id null (JSON-RPC 2.0 §5): the oldest such.
      else if (id === null && "error" in item) settle(null, item);
    }
  };

  const idsOfLine = (text: string): { message: unknown; ids: JsonRpcId[] } => {
    const message = JSON.parse(text) as unknown;
    return { message, ids: options.requestIdsOf(message) };
  };

  const onRefused = async (refusedEpoch: number, text: string) => {
    const { ids } = idsOfLine(text);
    if (refusedEpoch === epoch) {
      await options.refreshFrom(sentBearer);
      if (options.bearer() !== sentBearer) {
        sentBearer = options.bearer();
        epoch++;
        socket.write(controlLine(BEARER_KEY, sentBearer));
      }
    }
    if (epoch > refusedEpoch && !overHttp) {
      socket.write(`${text}\n`);
      return;
    }
    // Only the requests still waiting: the connection may have been lost during the refresh, and then they were
    // answered already (onLost).
    const still = ids.flatMap((id) => {
      const waiter = take(id);
      return waiter ? [{ id, waiter }] : [];
    });
    if (still.length === 0) return;
    options.warn(options.refusedText);
    for (const { id, waiter } of still) {
      options.writeError(id, RELAY_ERROR, options.refusedText);
      waiter.done();
    }
  };

  const onMoved = async (text: string) => {
    overHttp = true;
    const { message, ids } = idsOfLine(text);
    const taken = ids.map(take);
    await options.viaHttp(text, message);
    for (const waiter of taken) waiter?.done();
  };

  const onControl = (line: string) => {
    const control = JSON.parse(line) as Record<string, { epoch?: number; line?: string }>;
    const refused = control[REFUSED_KEY];
    const moved = control[MOVED_KEY];
    if (typeof refused?.line === "string") void onRefused(Number(refused.epoch), refused.line);
    else if (typeof moved?.line === "string") void onMoved(moved.line);
  };

  const onLost = () => {
    overHttp = true;
    lost = true;
    if (closing || waiting.size === 0) return;
    const text = `cannot relay to the bridge at ${options.path} (the connection closed); is urlbridge running?`;
    options.warn(text);
    for (const [id, list] of [...waiting]) {
      for (let i = list.length; i > 0; i--) {
        options.writeError(id, RELAY_ERROR, text);
        settle(id);
      }
    }
  };

  const onData = (chunk: Buffer) => {
    let data = chunk;
    for (;;) {
      const newline = data.indexOf(0x0a);
      const part = newline < 0 ? data : data.subarray(0, newline);
      size += part.length;
      if (size > options.maxAnswerBytes) {
        options.warn(
          `an answer from the bridge is larger than ${options.maxAnswerBytes} bytes; the connection is closed`,
        );
        socket.destroy();
        return;
      }
      chunks.push(part);
      if (newline < 0) return;
      const line = Buffer.concat(chunks, size).toString("utf8");
      chunks = [];
      size = 0;
      data = data.subarray(newline + 1);
      if (line === "") continue;
      if (line.startsWith(CONTROL_PREFIX)) onControl(line);
      else onAnswerLine(line);
    }
  };

  socket.on("data", onData);
  socket.on("error", () => {});
  socket.on("close", onLost);
  if (rest.length > 0) onData(rest);
  socket.resume();

  return {
    send(text, message, ids) {
      // A batch the bridge refuses whole goes over HTTP: that refusal's id is null, and the relay there answers
      // each of its requests too, where here they would wait for ever.
      if (overHttp || (Array.isArray(message) && message.length > MCP_MAX_BATCH_SIZE))
        return options.viaHttp(text, message);
      if (Buffer.byteLength(text) > MCP_MAX_BODY_BYTES) {
        // The bridge would refuse it unread: answered here, as the same error, without sending a megabyte.
        for (const id of ids.length > 0 ? ids : [null]) options.writeError(id, RELAY_ERROR, tooLargeMessage);
        return Promise.resolve();
      }
      // One server serves the connection, so a cancellation works: the cancelled request gets no answer (MCP's
      // cancellation rule), and the client expects none. Its waiter ends here; a late answer is still written.
      for (const id of cancelledIdsOf(message)) settle(id);
      const done = Promise.all(
        ids.map(
          (id) =>
            new Promise<void>((resolve) => {
              const list = waiting.get(id) ?? [];
              list.push({ request: message, done: resolve });
              waiting.set(id, list);
            }),
        ),
      ).then(() => undefined);
      // A client line that looks like a control line stays JSON-RPC for the bridge: JSON allows the leading space.
      socket.write(text.startsWith(CONTROL_PREFIX) ? ` ${text}\n` : `${text}\n`);
      return done;
    },
    get lost() {
      return lost;
    },
    close() {
      closing = true;
      socket.end();
    },
  };
}
