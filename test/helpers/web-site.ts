// A real HTTP site on a loopback address for the web tools' tests: fixed routes, each answered by a handler,
// and a count of the TCP connections it accepted (what "no connection to a refused address" is measured by).
import http from "node:http";
import type { AddressInfo } from "node:net";

export type SiteHandler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

export interface WebSite {
  origin: string;
  port: number;
  connections: number;
  /** Paths requested, in order. */
  requests: string[];
  close(): Promise<void>;
}

export async function startWebSite(
  routes: Record<string, SiteHandler>,
  host = "127.0.0.1",
  port = 0,
): Promise<WebSite> {
  const site: WebSite = { origin: "", port: 0, connections: 0, requests: [], close: async () => undefined };
  const server = http.createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0]!;
    site.requests.push(req.url ?? "/");
    const handler = routes[path];
    if (!handler) {
      res.writeHead(404, { "content-type": "text/plain" }).end("no such page");
      return;
    }
    handler(req, res);
  });
  server.on("connection", () => {
    site.connections += 1;
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  site.port = (server.address() as AddressInfo).port;
  site.origin = `http://${host.includes(":") ? `[${host}]` : host}:${site.port}`;
  site.close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return site;
}

/** A handler answering one body with these headers. */
export const answer =
  (
    body: string | Buffer,
    headers: Record<string, string> = { "content-type": "text/html; charset=utf-8" },
    status = 200,
  ): SiteHandler =>
  (_req, res) => {
    res.writeHead(status, headers).end(body);
  };
