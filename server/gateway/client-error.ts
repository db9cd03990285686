// Answers requests Node's HTTP parser refuses. A GET whose target carries raw bytes a reader did not
// encode (UTF-8 text, spaces, controls: curl sends them as typed) is re-encoded and served as usual.
import type http from "node:http";
import { Duplex } from "node:stream";
import { ErrorCode } from "../errors.js";
import { hasUnencodedTargetBytes, percentEncodeTargetBytes } from "../url-grammar/request-target.js";

interface ParserError extends Error {
  code?: string;
  bytesParsed?: number;
  rawPacket?: Buffer;
}

const HEAD_END = "\r\n\r\n";
const REQUEST_LINE = /^GET (\/.*) (HTTP\/1\.[01])$/;
// Replaced by "Connection: close"; and a data-plane GET has no body, so none is framed or awaited.
const DROPPED_HEADERS = /^(?:connection|content-length|transfer-encoding):/i;

// Node's own answers when no clientError listener exists (lib/_http_server.js), kept for every other case.
const NODE_DEFAULT_RESPONSES: Record<string, string> = {
  HPE_HEADER_OVERFLOW: "HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n",
  HPE_CHUNK_EXTENSIONS_OVERFLOW: "HTTP/1.1 413 Payload Too Large\r\nConnection: close\r\n\r\n",
  ERR_HTTP_REQUEST_TIMEOUT: "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n",
};
const BAD_REQUEST = "HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n";

const UNREADABLE_TARGET_BODY = JSON.stringify({
  ok: false,
  errorCode: ErrorCode.malformedRequestTarget,
  repairHint:
    "The URL carried raw bytes (non-ASCII text, spaces or control characters) that could not be read. Write non-ASCII as ~uXXXX, spaces as + or ~s, and newlines as ~n.",
  retryable: true,
  agentAction: "correct_request",
});

/**
 * Rebuilds the request head around position `at` with its target percent-encoded and the connection
 * closed after the answer, or returns undefined when the packet does not hold that whole head.
 */
export function reencodeRequestHead(packet: Buffer, at: number): Buffer | undefined {
  const text = packet.toString("latin1");
  // The parser fails inside the request line, so the line starts after the last newline before the error.
  const lineStart = text.lastIndexOf("\n", Math.max(0, at - 1)) + 1;
  const lineEnd = text.indexOf("\r\n", lineStart);
  const headEnd = text.indexOf(HEAD_END, lineStart);
  if (lineEnd === -1 || headEnd === -1 || at > lineEnd) return undefined;
  const line = REQUEST_LINE.exec(text.slice(lineStart, lineEnd));
  if (!line) return undefined;
  const target = Buffer.from(line[1]!, "latin1");
  if (!hasUnencodedTargetBytes(target)) return undefined;
  const headers = text
    .slice(lineEnd + 2, headEnd)
    .split("\r\n")
    .filter((h) => h.length > 0 && !DROPPED_HEADERS.test(h));
  const head = [`GET ${percentEncodeTargetBytes(target)} ${line[2]}`, ...headers, "Connection: close"].join("\r\n");
  return Buffer.from(`${head}${HEAD_END}`, "latin1");
}

/** Serves a rebuilt request head through `server` and writes its answer to the original socket. */
function serveRebuilt(server: http.Server, socket: Duplex, head: Buffer, rebuilt: WeakSet<Duplex>): void {
  // The reader may have hung up while an earlier pipelined answer was still going out.
  if (socket.destroyed) return;
  const stream = new Duplex({
    read() {},
    write(chunk: Buffer, _encoding, callback) {
      socket.write(chunk, callback);
    },
    final(callback) {
      socket.end();
      callback();
    },
  });
  Object.assign(stream, { remoteAddress: (socket as { remoteAddress?: string }).remoteAddress });
  rebuilt.add(stream);
  socket.once("close", () => stream.destroy());
  server.emit("connection", stream);
  stream.push(head);
}

type ServerResponseLike = http.ServerResponse & { _headerSent?: boolean };

/** Node's ServerResponse in flight on this socket, if a pipelined earlier request is still being answered. */
function responseInFlight(socket: Duplex): ServerResponseLike | undefined {
  return (socket as unknown as { _httpMessage?: ServerResponseLike | null })._httpMessage ?? undefined;
}

export function createClientErrorHandler(server: http.Server): (error: ParserError, socket: Duplex) => void {
  const rescued = new WeakSet<Duplex>();
  const rebuilt = new WeakSet<Duplex>();
  return (error, socket) => {
    // The rescued request is already being answered; later bytes on that socket are ignored.
    if (rescued.has(socket)) return;
    const inFlight = responseInFlight(socket);
    const head =
      !rebuilt.has(socket) && error.rawPacket && error.bytesParsed !== undefined
        ? reencodeRequestHead(error.rawPacket, error.bytesParsed)
        : undefined;
    if (head) {
      rescued.add(socket);
      // A pipelined earlier request is still being answered: answers must leave in request order.
      if (inFlight && !inFlight.writableFinished)
        inFlight.once("finish", () => serveRebuilt(server, socket, head, rebuilt));
      else serveRebuilt(server, socket, head, rebuilt);
      return;
    }
    if (error.code === "ECONNRESET" || !socket.writable || inFlight?._headerSent) {
      socket.destroy();
      return;
    }
    const body = error.code === "HPE_INVALID_URL" ? UNREADABLE_TARGET_BODY : undefined;
    const response = body
      ? `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
      : (NODE_DEFAULT_RESPONSES[error.code ?? ""] ?? BAD_REQUEST);
    socket.end(response, () => socket.destroy());
  };
}
