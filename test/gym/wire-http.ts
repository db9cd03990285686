// HTTP/1.1 at the byte level for the gym: send a request target exactly as given (raw UTF-8, spaces,
// anything) and read the answer as bytes. node:http cannot do either, by design.
import net from "node:net";

export interface WireResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

export interface WireRequestOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
}

const DEFAULT_TIMEOUT_MS = 20_000;

/** GETs `target` (a latin1 byte string: one char per byte) from origin, Connection: close. */
export function wireGet(origin: string, target: string, options: WireRequestOptions = {}): Promise<WireResponse> {
  const { hostname, port } = new URL(origin);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    const fail = (error: Error) => {
      clearTimeout(timer);
      socket.destroy();
      reject(error);
    };
    const timer = setTimeout(() => fail(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    options.signal?.addEventListener("abort", () => fail(new Error("aborted")), { once: true });
    socket.on("connect", () => {
      socket.write(
        Buffer.from(`GET ${target} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nConnection: close\r\n\r\n`, "latin1"),
      );
    });
    socket.on("data", (d) => chunks.push(d));
    socket.on("error", fail);
    socket.on("close", () => {
      clearTimeout(timer);
      try {
        resolve(parseResponse(Buffer.concat(chunks)));
      } catch (error) {
        reject(error as Error);
      }
    });
  });
}

function parseResponse(raw: Buffer): WireResponse {
  const headEnd = raw.indexOf("\r\n\r\n");
  if (headEnd === -1) throw new Error(`incomplete HTTP response (${raw.length} bytes)`);
  const [statusLine, ...lines] = raw.subarray(0, headEnd).toString("latin1").split("\r\n");
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? "")?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    // Only HTTP's own whitespace: String.trim would also eat a trailing byte 0xA0 (NBSP in latin1), which is
    // half of a UTF-8 character in a raw Location header.
    if (colon > 0)
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).replace(/^[ \t]+|[ \t]+$/g, "");
  }
  let body = raw.subarray(headEnd + 4);
  if (headers["transfer-encoding"]?.toLowerCase() === "chunked") body = dechunk(body);
  else if (headers["content-length"] !== undefined) body = body.subarray(0, Number(headers["content-length"]));
  return { status, headers, body };
}

function dechunk(body: Buffer): Buffer {
  const parts: Buffer[] = [];
  let rest = body;
  for (;;) {
    const nl = rest.indexOf("\r\n");
    if (nl === -1) break;
    const size = parseInt(rest.subarray(0, nl).toString("latin1"), 16);
    if (!size) break;
    parts.push(rest.subarray(nl + 2, nl + 2 + size));
    rest = rest.subarray(nl + 2 + size + 2);
  }
  return Buffer.concat(parts);
}

export interface RequestHead {
  method: string;
  /** The request target as received, a latin1 byte string. */
  target: string;
  version: string;
}

/** Parses a request head; the target is everything between the first and the last space of the line. */
export function parseRequestHead(head: Buffer): RequestHead | undefined {
  const lineEnd = head.indexOf("\r\n");
  const line = head.subarray(0, lineEnd === -1 ? head.length : lineEnd).toString("latin1");
  const first = line.indexOf(" ");
  const last = line.lastIndexOf(" ");
  if (first === -1 || last <= first) return undefined;
  return { method: line.slice(0, first), target: line.slice(first + 1, last), version: line.slice(last + 1) };
}

/** Writes a complete HTTP/1.1 response and closes the connection. */
export function writeResponse(socket: net.Socket, status: number, headers: Record<string, string>, body: Buffer): void {
  const lines = [`HTTP/1.1 ${status} ${status === 200 ? "OK" : status === 307 ? "Temporary Redirect" : "Status"}`];
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  lines.push(`Content-Length: ${body.length}`, "Connection: close", "", "");
  socket.end(Buffer.concat([Buffer.from(lines.join("\r\n"), "latin1"), body]));
}
