// Stand-in for cloudflared's metrics server (GET /quicktunnel, GET /ready), a process boundary we do not own.
// A real HTTP server on a loopback port whose answers each test sets; it records the paths it was asked for.
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface MetricsStandIn {
  url: string;
  /** Hostname reported by /quicktunnel ("" as cloudflared does for a named tunnel). */
  hostname: string;
  /** Live edge connections; /ready answers 200 only when this is above zero. */
  readyConnections: number;
  /** HTTP status for /quicktunnel (cloudflared answers 200). */
  quickTunnelStatus: number;
  requests: string[];
  close(): Promise<void>;
}

export async function startMetricsStandIn(
  initial: { hostname?: string; readyConnections?: number } = {},
): Promise<MetricsStandIn> {
  const state = {
    hostname: initial.hostname ?? "",
    readyConnections: initial.readyConnections ?? 0,
    quickTunnelStatus: 200,
    requests: [] as string[],
  };
  const server = http.createServer((req, res) => {
    state.requests.push(req.url ?? "");
    res.setHeader("content-type", "application/json");
    if (req.url === "/quicktunnel") {
      res.statusCode = state.quickTunnelStatus;
      res.end(JSON.stringify({ hostname: state.hostname }));
    } else if (req.url === "/ready") {
      const status = state.readyConnections > 0 ? 200 : 503;
      res.statusCode = status;
      res.end(
        JSON.stringify({
          status,
          readyConnections: state.readyConnections,
          connectorId: "00000000-0000-4000-8000-000000000000",
        }),
      );
    } else {
      res.statusCode = 404;
      res.end("404 page not found\n");
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  });
}

/** A loopback URL on which nothing listens (the port was just released). */
export async function unusedLoopbackUrl(): Promise<string> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}
