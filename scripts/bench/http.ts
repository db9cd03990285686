// HTTP plumbing for benchmarks: one keep-alive client used for a route and for its floor alike, and the
// floor itself, a bare node:http server answering every request with fixed bytes.
import http from "node:http";
import type { AddressInfo } from "node:net";
import Koa from "koa";

export interface BenchClient {
  /** GETs a URL and resolves with the whole body. */
  get(url: string): Promise<Buffer>;
  close(): void;
}

export function createBenchClient(maxSockets: number): BenchClient {
  const agent = new http.Agent({ keepAlive: true, maxSockets });
  return {
    get: (url) =>
      new Promise((resolve, reject) => {
        const request = http.get(url, { agent }, (response) => {
          const chunks: Buffer[] = [];
          response.on("data", (chunk: Buffer) => chunks.push(chunk));
          response.on("end", () => (response.statusCode === 200 ? resolve(Buffer.concat(chunks)) : reject(new Error(`HTTP ${response.statusCode} from ${url}`))));
          response.on("error", reject);
        });
        request.on("error", reject);
      }),
    close: () => agent.destroy(),
  };
}

export interface FloorServer {
  url: string;
  close(): Promise<void>;
}

/**
 * A node:http server with no framework, no routing and no work: the least any server can do per request.
 * With `koa`, the same answer comes from a one-middleware Koa app, to show what the framework alone costs.
 */
export async function startFloorServer(body: Buffer, contentType: string, options: { koa?: boolean } = {}): Promise<FloorServer> {
  let handler: http.RequestListener = (_req, res) => {
    res.writeHead(200, { "content-type": contentType, "content-length": body.length });
    res.end(body);
  };
  if (options.koa) {
    const app = new Koa();
    app.use((ctx) => {
      ctx.type = contentType;
      ctx.body = body;
    });
    handler = app.callback();
  }
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
