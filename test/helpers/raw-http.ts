// Sends an HTTP/1.1 GET with a request target written byte for byte (no client-side URL normalisation),
// the way a hostile or sloppy URL reader might.
import net from "node:net";

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export function rawGet(origin: string, target: string | Buffer, timeoutMs = 10_000): Promise<RawResponse> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within ${timeoutMs} ms for ${String(target).slice(0, 120)}`));
    }, timeoutMs);
    socket.on("connect", () => {
      socket.write(
        Buffer.concat([
          Buffer.from("GET "),
          Buffer.from(target),
          Buffer.from(` HTTP/1.1\r\nHost: ${hostname}:${port}\r\nConnection: close\r\n\r\n`),
        ]),
      );
    });
    socket.on("data", (d) => chunks.push(d));
    socket.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    socket.on("close", () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString("utf8");
      const headEnd = text.indexOf("\r\n\r\n");
      const head = headEnd === -1 ? text : text.slice(0, headEnd);
      const [statusLine, ...lines] = head.split("\r\n");
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? "")?.[1] ?? 0);
      const headers: Record<string, string> = {};
      for (const l of lines) {
        const i = l.indexOf(":");
        // Only HTTP whitespace is trimmed: String.trim would also eat a non-ASCII byte read as latin1 (0xA0).
        if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).replace(/^[ \t]+|[ \t]+$/g, "");
      }
      let body = headEnd === -1 ? "" : text.slice(headEnd + 4);
      if (headers["transfer-encoding"] === "chunked") body = dechunk(body);
      resolve({ status, headers, body });
    });
  });
}

function dechunk(body: string): string {
  let out = "";
  let rest = Buffer.from(body, "utf8");
  for (;;) {
    const nl = rest.indexOf("\r\n");
    if (nl === -1) return out;
    const size = parseInt(rest.subarray(0, nl).toString(), 16);
    if (!size) return out;
    out += rest.subarray(nl + 2, nl + 2 + size).toString("utf8");
    rest = rest.subarray(nl + 2 + size + 2);
  }
}

/**
 * Writes `request` to a fresh connection exactly as given (any method, several pipelined requests) and
 * resolves with every byte the server sent until it closed the connection.
 */
export function rawExchange(origin: string, request: string | Buffer, timeoutMs = 10_000): Promise<Buffer> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(
        new Error(
          `the server did not close the connection within ${timeoutMs} ms after ${String(request).slice(0, 120)}`,
        ),
      );
    }, timeoutMs);
    socket.on("connect", () => socket.write(request));
    socket.on("data", (d: Buffer) => chunks.push(d));
    socket.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    socket.on("close", () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks));
    });
  });
}
