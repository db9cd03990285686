// URLBRIDGE_WEB_ALLOW: the private hosts and networks the operator lets webfetch reach anyway. Empty by default;
// entries are host names (matched exactly, case and a trailing dot ignored) or IP addresses and CIDR ranges.
import net from "node:net";

export interface WebAllowlist {
  /** Lower-case names without a trailing dot. */
  hosts: ReadonlySet<string>;
  /** Ranges as written (for the operator), and their matchers by family. */
  cidrs: readonly string[];
  v4: net.BlockList;
  v6: net.BlockList;
}

const HOST_NAME = /^(?=.{1,253}$)([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

export const EMPTY_WEB_ALLOWLIST: WebAllowlist = parseWebAllowlist([]);

/** Lower case, one trailing dot dropped: how a host is compared with the allowlist and looked up. */
export function normalizeHostName(host: string): string {
  const lower = host.toLowerCase();
  return lower.endsWith(".") ? lower.slice(0, -1) : lower;
}

/** Why an entry is not usable, or undefined when it is (config.ts names the variable). */
export function allowEntryProblem(entry: string): string | undefined {
  const [address, prefix, extra] = entry.split("/");
  if (extra !== undefined) return `"${entry}" has more than one /`;
  const bare = address!.replace(/^\[(.*)\]$/, "$1");
  const family = net.isIP(bare);
  if (family !== 0) {
    if (prefix === undefined) return undefined;
    const bits = /^\d{1,3}$/.test(prefix) ? Number(prefix) : NaN;
    return bits >= 0 && bits <= (family === 4 ? 32 : 128)
      ? undefined
      : `"${entry}" has a prefix length outside 0-${family === 4 ? 32 : 128}`;
  }
  if (prefix !== undefined) return `"${entry}" is a range but ${address} is not an IP address`;
  return HOST_NAME.test(normalizeHostName(bare))
    ? undefined
    : `"${entry}" is neither a host name nor an IP address or CIDR range`;
}

/** Entries already checked with allowEntryProblem. */
export function parseWebAllowlist(entries: readonly string[]): WebAllowlist {
  const hosts = new Set<string>();
  const cidrs: string[] = [];
  const v4 = new net.BlockList();
  const v6 = new net.BlockList();
  for (const entry of entries) {
    const [address, prefix] = entry.split("/") as [string, string | undefined];
    const bare = address.replace(/^\[(.*)\]$/, "$1");
    const family = net.isIP(bare);
    if (family === 0) {
      hosts.add(normalizeHostName(bare));
      continue;
    }
    const bits = prefix === undefined ? (family === 4 ? 32 : 128) : Number(prefix);
    (family === 4 ? v4 : v6).addSubnet(bare, bits, family === 4 ? "ipv4" : "ipv6");
    cidrs.push(`${bare}/${bits}`);
  }
  return { hosts, cidrs, v4, v6 };
}

export function allowsHost(allow: WebAllowlist, host: string): boolean {
  return allow.hosts.has(normalizeHostName(host));
}

export function allowsAddress(allow: WebAllowlist, address: string): boolean {
  const family = net.isIP(address);
  // Family-checked: BlockList would match an IPv4 range against an IPv4-mapped IPv6 address (address-rules.ts).
  if (family === 4) return allow.v4.check(address, "ipv4");
  if (family === 6) return allow.v6.check(address, "ipv6");
  return false;
}
