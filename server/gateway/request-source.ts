// Who sent a data-plane request, for the unknown-token throttle. Behind the tunnel every request comes from
// cloudflared, so its cf-connecting-ip names the client; but anyone can send that header, so it is believed
// only when the TCP peer is a trusted proxy (URLBRIDGE_TRUSTED_PROXIES). Compose names the tunnel's service
// ("tunnel"), not the edge network: any other container on that network rotating the header would otherwise
// guess 45x faster (issue 28, item 6). A name is resolved in the background and re-resolved as it ages or when
// a peer it does not match arrives (the tunnel restarted on a new address); until then the header is not believed.
import dns from "node:dns";
import type http from "node:http";
import net from "node:net";
import { normalizeAddress, parseTrustedProxy } from "../config-checks.js";

const CLIENT_IP_HEADER = "cf-connecting-ip";

/** How long a resolved name's addresses are used before they are looked up again. */
export const TRUSTED_NAME_TTL_MS = 30_000;
/** The least time between two lookups a peer that matches no address asks for (the tunnel may have restarted). */
export const TRUSTED_NAME_RETRY_MS = 2_000;

export type ResolveAll = (name: string) => Promise<string[]>;

const resolveWithSystem: ResolveAll = async (name) =>
  (await dns.promises.lookup(name, { all: true })).map((a) => a.address);

export interface RequestSourceOptions {
  /** Looks a trusted name up (default: the system resolver, Docker's DNS in the appliance); tests inject one. */
  resolve?: ResolveAll;
  now?: () => number;
}

/** Returns the throttle key of a request: its peer address, or the forwarded client when the peer is trusted. */
export function createRequestSource(
  trustedProxies: readonly string[],
  options: RequestSourceOptions = {},
): (req: http.IncomingMessage) => string {
  const trusted = new net.BlockList();
  const names: string[] = [];
  for (const entry of trustedProxies) {
    const parsed = parseTrustedProxy(entry);
    if (parsed && "cidr" in parsed) trusted.addSubnet(parsed.cidr.address, parsed.cidr.prefix, parsed.cidr.family);
    else if (parsed) names.push(parsed.name);
  }
  const byName =
    names.length > 0
      ? createNameTrust(names, options.resolve ?? resolveWithSystem, options.now ?? Date.now)
      : undefined;
  const anyTrusted = trustedProxies.length > 0;
  const isTrusted = (peer: string) =>
    trusted.check(peer, net.isIP(peer) === 4 ? "ipv4" : "ipv6") || (byName?.matches(peer) ?? false);
  return (req) => {
    const peer = normalizeAddress(req.socket.remoteAddress ?? "unknown");
    if (!anyTrusted || net.isIP(peer) === 0 || !isTrusted(peer)) return peer;
    // One header, one address: a list or garbage falls back to the proxy itself.
    const forwarded = req.headers[CLIENT_IP_HEADER];
    if (typeof forwarded !== "string") return peer;
    const client = forwarded.trim();
    return net.isIP(client) === 0 ? peer : normalizeAddress(client);
  };
}

/** The addresses trusted names resolve to, refreshed in the background; a lookup that fails keeps the last answer. */
function createNameTrust(names: string[], resolve: ResolveAll, now: () => number) {
  let addresses = new Set<string>();
  let resolvedAt = -Infinity;
  let refreshing = false;
  const refresh = () => {
    if (refreshing) return;
    refreshing = true;
    resolvedAt = now();
    void Promise.allSettled(names.map((n) => resolve(n))).then((results) => {
      refreshing = false;
      const found = results.flatMap((r) => (r.status === "fulfilled" ? r.value : []));
      if (found.length > 0 || results.every((r) => r.status === "fulfilled"))
        addresses = new Set(found.map(normalizeAddress));
    });
  };
  refresh();
  return {
    matches(peer: string): boolean {
      const age = now() - resolvedAt;
      const hit = addresses.has(peer);
      if (age >= TRUSTED_NAME_TTL_MS || (!hit && age >= TRUSTED_NAME_RETRY_MS)) refresh();
      return hit;
    },
  };
}
