// URLBRIDGE_WEB_ALLOW: the private hosts and networks the operator lets webfetch reach anyway. Empty by default;
// entries are host names (matched exactly, case and a trailing dot ignored) or IP addresses and CIDR ranges.
import net from "node:net";
import { normalizeHostName } from "../../../config-checks.js";

export interface WebAllowlist {
  /** Lower-case names without a trailing dot. */
  hosts: ReadonlySet<string>;
  /** Ranges as written (for the operator), and their matchers by family. */
  cidrs: readonly string[];
  v4: net.BlockList;
  v6: net.BlockList;
}

export const EMPTY_WEB_ALLOWLIST: WebAllowlist = parseWebAllowlist([]);

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
