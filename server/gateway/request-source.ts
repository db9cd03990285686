// Who sent a data-plane request, for the unknown-token throttle. Behind the tunnel every request comes from
// cloudflared, so its cf-connecting-ip names the client; but anyone can send that header, so it is believed
// only when the TCP peer is a trusted proxy (URLBRIDGE_TRUSTED_PROXIES: compose sets the tunnel's network).
import type http from "node:http";
import net from "node:net";

export interface Cidr {
  address: string;
  prefix: number;
  family: "ipv4" | "ipv6";
}

const CLIENT_IP_HEADER = "cf-connecting-ip";

/** `::ffff:192.0.2.1` (an IPv4 peer on a dual-stack socket) is 192.0.2.1. */
export function normalizeAddress(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return (mapped ? mapped[1]! : address).toLowerCase();
}

/** An IP address or CIDR range ("172.30.47.0/24", "fd00::/8", "127.0.0.1"); undefined when it is neither. */
export function parseCidr(entry: string): Cidr | undefined {
  const [address, prefixText, ...rest] = entry.trim().split("/");
  if (!address || rest.length > 0) return undefined;
  const version = net.isIP(address);
  if (version === 0) return undefined;
  const max = version === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? max : /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : NaN;
  if (!(prefix >= 0 && prefix <= max)) return undefined;
  return { address: normalizeAddress(address), prefix, family: version === 4 ? "ipv4" : "ipv6" };
}

/** Returns the throttle key of a request: its peer address, or the forwarded client when the peer is trusted. */
export function createRequestSource(trustedProxies: readonly string[]): (req: http.IncomingMessage) => string {
  const trusted = new net.BlockList();
  for (const entry of trustedProxies) {
    const cidr = parseCidr(entry);
    if (cidr) trusted.addSubnet(cidr.address, cidr.prefix, cidr.family);
  }
  const anyTrusted = trustedProxies.length > 0;
  return (req) => {
    const peer = normalizeAddress(req.socket.remoteAddress ?? "unknown");
    if (!anyTrusted || net.isIP(peer) === 0 || !trusted.check(peer, net.isIP(peer) === 4 ? "ipv4" : "ipv6")) return peer;
    // One header, one address: a list or garbage falls back to the proxy itself.
    const forwarded = req.headers[CLIENT_IP_HEADER];
    if (typeof forwarded !== "string") return peer;
    const client = forwarded.trim();
    return net.isIP(client) === 0 ? peer : normalizeAddress(client);
  };
}
