// A raw HTTP client for control-plane tests: unlike fetch, it lets a test set Host, Origin and
// Sec-Fetch-Site exactly as a browser or an attacker's page would.
import http from "node:http";

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json<T = { error?: { code: string; message: string } }>(): T;
}

export function rawRequest(
  url: string,
  /** localAddress: the source address to connect from (any 127.x.y.z on loopback), as another peer would. */
  options: { method?: string; headers?: Record<string, string>; body?: unknown; localAddress?: string } = {},
): Promise<RawResponse> {
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  const headers: Record<string, string> = {
    ...(payload ? { "content-type": "application/json" } : {}),
    ...options.headers,
  };
  return new Promise((resolve, reject) => {
    const from = options.localAddress ? { localAddress: options.localAddress } : {};
    const req = http.request(url, { method: options.method ?? "GET", headers, ...from }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) });
      });
    });
    req.on("error", reject);
    req.end(payload);
  });
}

/** The `name=value` part of a Set-Cookie header, ready to send back as Cookie. */
export function cookiePair(setCookie: string[] | undefined): string {
  const first = setCookie?.[0];
  if (!first) throw new Error("no Set-Cookie header in the response");
  return first.split(";")[0]!;
}
