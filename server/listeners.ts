// The bridge's HTTP listeners: the control plane's addresses resolved, one server per address on one port, Koa
// apps as request listeners, closing a server with its connections, the start-up line that says who reaches the
// data plane, and the moment work that can wait for the first answers starts.
import dns from "node:dns/promises";
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import type { Config } from "./config.js";

/**
 * How long after the planes listen work that can wait starts (the WAL checkpoint worker's thread): the first answers,
 * a start-up's health probe or an agent's first call, go out before it, not behind it (issue 34).
 */
export const AFTER_LISTEN_DELAY_MS = 200;

/** `promise` settles AFTER_LISTEN_DELAY_MS after `listened()` is called; its timer keeps no process up. */
export function afterListening(): { promise: Promise<void>; listened(): void } {
  let listened = () => {};
  const promise = new Promise<void>((resolve) => {
    listened = () => setTimeout(resolve, AFTER_LISTEN_DELAY_MS).unref();
  });
  return { promise, listened };
}

export function listen(server: http.Server, host: string, port: number): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

/**
 * The addresses behind URLBRIDGE_CONTROL_HOST's entries: IP literals as they are, names resolved now (in compose,
 * the bridge's alias on the control network), so the control plane listens there and nowhere else.
 */
export async function resolveListenAddresses(hosts: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const host of hosts) {
    const bare = host.replace(/^\[(.*)\]$/, "$1");
    if (net.isIP(bare) !== 0) {
      out.push(bare);
      continue;
    }
    try {
      for (const { address } of await dns.lookup(bare, { all: true })) out.push(address);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? "error";
      throw new Error(
        `URLBRIDGE_CONTROL_HOST: cannot resolve "${host}" (${code}); name an address or a host name this machine has (in compose: the bridge's alias on the control network).`,
        { cause: error },
      );
    }
  }
  return [...new Set(out)];
}

/** Koa settles every request itself (ctx.onerror answers a failure), so nothing awaits what its callback returns. */
export function koaListener(app: {
  callback(): (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void>;
}) {
  const handle = app.callback();
  const listener: http.RequestListener = (req, res) => void handle(req, res);
  return listener;
}

/** One server per address, all on the first one's port (port 0 picks it once). */
export async function listenAll(
  handler: http.RequestListener,
  addresses: readonly string[],
  port: number,
): Promise<{ servers: http.Server[]; port: number }> {
  const servers: http.Server[] = [];
  let chosen = port;
  try {
    for (const address of addresses) {
      const server = http.createServer(handler);
      servers.push(server);
      chosen = (await listen(server, address, chosen)).port;
    }
  } catch (error) {
    await Promise.all(servers.map(closeServer));
    throw error;
  }
  return { servers, port: chosen };
}

export function closeServer(server: http.Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/**
 * The start-up line for the data plane, honest about who reaches it: in the appliance it listens inside the
 * container, where only the tunnel (or the loopback publish of deploy/compose.local-data-plane.yaml) reaches it.
 */
export function dataPlaneLine(
  dataUrl: string,
  config: Config,
  context: { inAppliance: boolean; dataPlaneOnHost: boolean },
): string {
  if (!context.inAppliance)
    return `data plane on ${dataUrl} (agent routes; reachable from this machine only until you tunnel it or set a public origin)`;
  const where = `data plane listening on ${config.data.host}:${config.data.port} inside the container (agent routes)`;
  return context.dataPlaneOnHost
    ? `${where}; also published on the host at http://127.0.0.1:${config.data.port} (deploy/compose.local-data-plane.yaml): Init URLs with the local origin work on this host only`
    : `${where}; agents reach it only through the tunnel: until it connects, Init URLs use ${dataUrl}, which nobody outside this container can reach`;
}

export const hostForUrl = (host: string) =>
  host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host.includes(":") ? `[${host}]` : host;
