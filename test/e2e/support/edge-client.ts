// An agent's fetch, from the host, through the edge stand-in: the URL keeps its public origin (https://edge:8443)
// in Host and SNI, the TCP connection goes to the edge's loopback-published port, and the certificate is verified.
import https from "node:https";

export interface EdgeClient {
  /** The public origin the bridge discovered, e.g. https://edge:8443. */
  origin: string;
  get<T = Record<string, unknown>>(url: string): Promise<{ status: number; body: T }>;
}

export function createEdgeClient(options: { origin: string; port: number; ca: string }): EdgeClient {
  const publicUrl = new URL(options.origin);
  return {
    origin: options.origin,
    get<T>(url: string) {
      if (!url.startsWith(`${options.origin}/`)) throw new Error(`not a URL on ${options.origin}: ${url}`);
      // Send the target exactly as given: re-parsing with URL() could re-encode an agent's raw= tail.
      const target = url.slice(options.origin.length);
      return new Promise<{ status: number; body: T }>((resolve, reject) => {
        const req = https.request(
          {
            host: "127.0.0.1",
            port: options.port,
            path: target,
            method: "GET",
            servername: publicUrl.hostname,
            ca: options.ca,
            headers: { host: publicUrl.host },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on("data", (chunk: Buffer) => chunks.push(chunk));
            res.on("end", () => {
              const text = Buffer.concat(chunks).toString("utf8");
              let body: unknown = text;
              try {
                body = JSON.parse(text);
              } catch {
                // Non-JSON bodies (an opaque 404) stay text.
              }
              resolve({ status: res.statusCode ?? 0, body: body as T });
            });
          },
        );
        req.on("error", reject);
        req.setTimeout(30_000, () => req.destroy(new Error(`timed out: GET ${url}`)));
        req.end();
      });
    },
  };
}

/** How long the bridge may take to discover the edge's hostname: it polls the edge's metrics server every 5 s. */
export const DISCOVERY_TIMEOUT_MS = 30_000;

/** Waits, bounded, until `currentOrigin` (the bridge's /api/tunnel origin) is `origin`, so Init URLs carry it. */
export async function waitForDiscoveredOrigin(
  currentOrigin: () => Promise<string | undefined>,
  origin: string,
  timeoutMs = DISCOVERY_TIMEOUT_MS,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let seen: string | undefined;
  while (Date.now() < deadline) {
    seen = await currentOrigin();
    if (seen === origin) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`the bridge did not discover ${origin} within ${timeoutMs} ms (origin: ${seen})`);
}
