// The guard in one step per hop: resolve the host once, check every address it resolves to, and hand back the one
// the request will connect to. The fetch connects to that address only (http-get.ts pins it through `lookup`), so
// a second, different answer from DNS (rebinding) can never be what the connection reaches.
import dns from "node:dns/promises";
import net from "node:net";
import { ErrorCode, ToolError } from "../../../errors.js";
import { embeddedIpv4, RULE_REASONS, rangeRuleOf, type AddressRule } from "./address-rules.js";
import { normalizeHostName } from "../../../config-checks.js";
import { allowsAddress, allowsHost, type WebAllowlist } from "./allowlist.js";
import { ownNetworks, type NetworkInterfaces } from "./own-networks.js";
import { hostOf } from "./target.js";

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Name resolution at the process boundary: dns.lookup by default; tests inject a stand-in (DNS rebinding). */
export type WebResolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: WebResolver = async (hostname) => {
  const found = await dns.lookup(hostname, { all: true, verbatim: true });
  return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

export interface WebGuard {
  allow: WebAllowlist;
  resolve: WebResolver;
  interfaces?: NetworkInterfaces;
}

export interface VettedTarget {
  url: URL;
  /** The host as the URL names it (normalized), for the activity log and answers. */
  host: string;
  /** The checked address the connection must go to. */
  address: string;
  family: 4 | 6;
}

export interface AddressVerdict {
  rule: AddressRule;
  /** The own network that matched (bridge_network), or the IPv4 address an IPv6 form carries. */
  network?: string;
  embedded?: string;
}

/** Why this address is refused, or undefined when webfetch may connect to it. */
export function classifyAddress(
  address: string,
  allow: WebAllowlist,
  interfaces?: NetworkInterfaces,
): AddressVerdict | undefined {
  if (allowsAddress(allow, address)) return undefined;
  const rule = rangeRuleOf(address);
  if (rule) {
    const embedded = embeddedIpv4(address, rule);
    return embedded ? { rule, embedded } : { rule };
  }
  const network = ownNetworks(interfaces).containing(address);
  return network ? { rule: "bridge_network", network } : undefined;
}

function refused(host: string, address: string, verdict: AddressVerdict): ToolError {
  const inside = verdict.embedded
    ? ` (it carries ${verdict.embedded})`
    : verdict.network
      ? ` (${verdict.network})`
      : "";
  const shown = host === address ? address : `${host} (${address})`;
  return new ToolError(
    ErrorCode.webAddressRefused,
    `webfetch does not connect to ${shown}: rule ${verdict.rule}, ${RULE_REASONS[verdict.rule]}${inside}. Fetch a public address; only the operator can allow a private host or range (URLBRIDGE_WEB_ALLOW).`,
    {
      detail: {
        host,
        address,
        rule: verdict.rule,
        ...(verdict.embedded ? { embedded: verdict.embedded } : {}),
        ...(verdict.network ? { network: verdict.network } : {}),
      },
    },
  );
}

/** RFC 6761: localhost and *.localhost are loopback whatever a resolver says. */
const isLocalhostName = (name: string) => name === "localhost" || name.endsWith(".localhost");

/** Checks one hop's target and picks the address to connect to; throws web_address_refused or web_dns_failed. */
export async function vetTarget(url: URL, guard: WebGuard): Promise<VettedTarget> {
  const literal = hostOf(url);
  const family = net.isIP(literal);
  if (family !== 0) {
    const verdict = allowsHost(guard.allow, literal)
      ? undefined
      : classifyAddress(literal, guard.allow, guard.interfaces);
    if (verdict) throw refused(literal, literal, verdict);
    return { url, host: literal, address: literal, family: family === 6 ? 6 : 4 };
  }
  const host = normalizeHostName(literal);
  const hostAllowed = allowsHost(guard.allow, host);
  if (!hostAllowed && isLocalhostName(host)) throw refused(host, host, { rule: "loopback" });
  let addresses: ResolvedAddress[];
  try {
    addresses = await guard.resolve(host);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "error";
    throw new ToolError(ErrorCode.webDnsFailed, `${host} does not resolve (${code}). Check the host name.`, {
      detail: { host, code },
      retryable: code === "EAI_AGAIN",
    });
  }
  const usable = addresses.filter((a) => net.isIP(a.address) !== 0);
  if (usable.length === 0) {
    throw new ToolError(ErrorCode.webDnsFailed, `${host} resolves to no address. Check the host name.`, {
      detail: { host, code: "ENODATA" },
      retryable: false,
    });
  }
  // Every address is checked, not only the one used: a name that mixes a public and a private answer is refused.
  if (!hostAllowed) {
    for (const candidate of usable) {
      const verdict = classifyAddress(candidate.address, guard.allow, guard.interfaces);
      if (verdict) throw refused(host, candidate.address, verdict);
    }
  }
  const chosen = usable[0]!;
  return { url, host, address: chosen.address, family: net.isIP(chosen.address) === 6 ? 6 : 4 };
}
