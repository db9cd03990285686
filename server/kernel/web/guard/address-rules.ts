// The address ranges webfetch never connects to, each under the rule name a refusal reports. IPv4 and IPv6 are
// kept in separate tables on purpose: node's BlockList matches an IPv4 rule against an IPv4-mapped IPv6 address
// (and ::ffff:0:0/96 against every IPv4 address), so each family is only ever checked against its own rules.
import net from "node:net";

/** Why an address is refused; stable strings, named in `web_address_refused` and docs/SECURITY.md. */
export type AddressRule =
  | "unspecified"
  | "loopback"
  | "private"
  | "link_local"
  | "cgnat"
  | "multicast"
  | "reserved"
  | "documentation"
  | "unique_local"
  | "ipv4_mapped"
  | "nat64"
  | "ipv4_embedded"
  | "bridge_network";

type Range = readonly [network: string, prefix: number, rule: AddressRule, why: string];

/** First match wins. */
const IPV4_RANGES: readonly Range[] = [
  ["0.0.0.0", 8, "unspecified", "RFC 1122 this network; 0.0.0.0 reaches this host on Linux"],
  ["10.0.0.0", 8, "private", "RFC 1918"],
  ["100.64.0.0", 10, "cgnat", "RFC 6598 shared address space (carrier-grade NAT)"],
  ["127.0.0.0", 8, "loopback", "RFC 1122"],
  ["169.254.0.0", 16, "link_local", "RFC 3927; 169.254.169.254 is the cloud metadata service"],
  ["172.16.0.0", 12, "private", "RFC 1918 (Docker's default networks live here)"],
  ["192.0.0.0", 24, "reserved", "RFC 6890 IETF protocol assignments"],
  ["192.0.2.0", 24, "documentation", "RFC 5737 TEST-NET-1"],
  ["192.88.99.0", 24, "reserved", "RFC 7526 deprecated 6to4 relay anycast"],
  ["192.168.0.0", 16, "private", "RFC 1918"],
  ["198.18.0.0", 15, "reserved", "RFC 2544 benchmarking"],
  ["198.51.100.0", 24, "documentation", "RFC 5737 TEST-NET-2"],
  ["203.0.113.0", 24, "documentation", "RFC 5737 TEST-NET-3"],
  ["224.0.0.0", 4, "multicast", "RFC 5771"],
  ["240.0.0.0", 4, "reserved", "RFC 1112 future use, and 255.255.255.255 broadcast"],
];

const IPV6_RANGES: readonly Range[] = [
  ["::", 128, "unspecified", "RFC 4291"],
  ["::1", 128, "loopback", "RFC 4291"],
  ["::ffff:0:0", 96, "ipv4_mapped", "RFC 4291 IPv4-mapped: the connection would go to the IPv4 address inside"],
  ["::", 96, "ipv4_embedded", "RFC 4291 deprecated IPv4-compatible"],
  ["64:ff9b::", 96, "nat64", "RFC 6052 NAT64 well-known prefix: a NAT64 gateway reaches the IPv4 address inside"],
  ["64:ff9b:1::", 48, "nat64", "RFC 8215 local-use NAT64"],
  ["100::", 64, "reserved", "RFC 6666 discard"],
  ["2001::", 23, "reserved", "RFC 2928 IETF protocol assignments (Teredo, benchmarking, ORCHID)"],
  ["2001:db8::", 32, "documentation", "RFC 3849"],
  ["2002::", 16, "ipv4_embedded", "RFC 3056 6to4: a relay reaches the IPv4 address inside"],
  ["3fff::", 20, "documentation", "RFC 9637"],
  ["fc00::", 7, "unique_local", "RFC 4193 unique local (ULA)"],
  ["fe80::", 10, "link_local", "RFC 4291"],
  ["fec0::", 10, "reserved", "RFC 3879 deprecated site-local"],
  ["ff00::", 8, "multicast", "RFC 4291"],
];

interface CompiledRange {
  rule: AddressRule;
  list: net.BlockList;
}

function compile(ranges: readonly Range[], family: "ipv4" | "ipv6"): CompiledRange[] {
  return ranges.map(([network, prefix, rule]) => {
    const list = new net.BlockList();
    list.addSubnet(network, prefix, family);
    return { rule, list };
  });
}

const V4 = compile(IPV4_RANGES, "ipv4");
const V6 = compile(IPV6_RANGES, "ipv6");
/** Global unicast (RFC 4291 2000::/3): any IPv6 address outside it that no row names is reserved. */
const V6_GLOBAL = new net.BlockList();
V6_GLOBAL.addSubnet("2000::", 3, "ipv6");

/** The rule that refuses this address, or undefined when it is public. `address` must be an IP literal. */
export function rangeRuleOf(address: string): AddressRule | undefined {
  const family = net.isIP(address);
  if (family === 4) return V4.find((r) => r.list.check(address, "ipv4"))?.rule;
  if (family === 6)
    return (
      V6.find((r) => r.list.check(address, "ipv6"))?.rule ?? (V6_GLOBAL.check(address, "ipv6") ? undefined : "reserved")
    );
  return "reserved";
}

/** The IPv4 address an IPv4-mapped, -compatible, NAT64 or 6to4 IPv6 address carries, for the refusal's words. */
export function embeddedIpv4(address: string, rule: AddressRule): string | undefined {
  if (net.isIP(address) !== 6) return undefined;
  const words = expandIpv6(address);
  if (!words) return undefined;
  const quad = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  if (rule === "ipv4_mapped" || rule === "nat64" || (rule === "ipv4_embedded" && words[0] === 0))
    return quad(words[6]!, words[7]!);
  if (rule === "ipv4_embedded" && words[0] === 0x2002) return quad(words[1]!, words[2]!);
  return undefined;
}

/** Eight 16-bit words of a valid IPv6 literal (dotted IPv4 tail allowed). */
function expandIpv6(address: string): number[] | undefined {
  let text = address;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1]!.split(".").map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split("::") as [string, string | undefined];
  const part = (s: string) => (s === "" ? [] : s.split(":").map((w) => parseInt(w, 16)));
  const left = part(head);
  const right = tail === undefined ? [] : part(tail);
  const fill = tail === undefined ? 0 : 8 - left.length - right.length;
  const words = [...left, ...new Array<number>(fill).fill(0), ...right];
  return words.length === 8 ? words : undefined;
}

/** One line per rule, for refusals. */
export const RULE_REASONS: Record<AddressRule, string> = {
  unspecified: "the unspecified address, which reaches this host",
  loopback: "loopback, the bridge itself",
  private: "a private network (RFC 1918)",
  link_local: "link-local, where the cloud metadata service lives (169.254.169.254)",
  cgnat: "carrier-grade NAT shared space (RFC 6598)",
  multicast: "multicast",
  reserved: "a reserved range",
  documentation: "a documentation range, never a real host",
  unique_local: "an IPv6 unique local network (ULA)",
  ipv4_mapped: "an IPv4-mapped IPv6 address",
  nat64: "a NAT64 form of an IPv4 address",
  ipv4_embedded: "an IPv6 form that carries an IPv4 address (IPv4-compatible or 6to4)",
  bridge_network: "a network the bridge itself is attached to",
};

/** The table as docs/SECURITY.md shows it (a unit test keeps the two equal). */
export const ADDRESS_RANGES: ReadonlyArray<{ cidr: string; rule: AddressRule; why: string }> = [
  ...IPV4_RANGES,
  ...IPV6_RANGES,
].map(([network, prefix, rule, why]) => ({ cidr: `${network}/${prefix}`, rule, why }));
