// The checks config.ts applies to URLBRIDGE_* values, here so configuration needs no module above it: the
// operator token's strength (control/operator-token.ts), trusted-proxy entries (gateway/request-source.ts) and
// webfetch allowlist entries (kernel/web/guard/allowlist.ts) are parsed the same way where they are used.
import net from "node:net";

// URLBRIDGE_OPERATOR_TOKEN

/** The least a token must carry by the estimate in operatorTokenWeakness. */
export const MIN_OPERATOR_TOKEN_BITS = 128;
/** Guards the estimate against repetition ("aaaa…", "abab…"), which the alphabet alone cannot see. */
export const MIN_DISTINCT_TOKEN_CHARACTERS = 10;
export const GENERATE_TOKEN_HINT = "generate one with `openssl rand -base64 32` (or `openssl rand -hex 32`)";

/** Narrowest alphabet first: a token drawn from it carries log2(size) bits per character at best. */
const TOKEN_ALPHABETS: ReadonlyArray<{ name: string; pattern: RegExp; size: number }> = [
  { name: "decimal digits", pattern: /^[0-9]+$/, size: 10 },
  { name: "hex digits", pattern: /^(?:[0-9a-f]+|[0-9A-F]+)$/, size: 16 },
  { name: "base64/base64url characters", pattern: /^[A-Za-z0-9+/_-]+={0,2}$/, size: 64 },
  { name: "printable ASCII", pattern: /^[\x21-\x7e]+$/, size: 94 },
];

/**
 * Why a configured operator token is too weak, or undefined when it is strong enough. The estimate is
 * length x log2(size of the narrowest alphabet holding every character), counted without base64 padding,
 * so >= 128 bits means at least 39 decimal digits, 32 hex digits, 22 base64url characters or 20 other
 * printable characters; and at least 10 distinct characters. Human-chosen passwords overstate it: use random.
 */
export function operatorTokenWeakness(token: string): string | undefined {
  const alphabet = TOKEN_ALPHABETS.find((a) => a.pattern.test(token));
  if (!alphabet) return `it must be printable ASCII without spaces; ${GENERATE_TOKEN_HINT}`;
  const length = token.replace(/=+$/, "").length;
  const bits = Math.floor(length * Math.log2(alphabet.size));
  if (bits < MIN_OPERATOR_TOKEN_BITS) {
    const needed = Math.ceil(MIN_OPERATOR_TOKEN_BITS / Math.log2(alphabet.size));
    return `it carries about ${bits} bits (${length} ${alphabet.name}) and the control plane needs at least ${MIN_OPERATOR_TOKEN_BITS} (${needed} or more ${alphabet.name}), so it cannot be guessed; ${GENERATE_TOKEN_HINT}`;
  }
  if (new Set(token).size < MIN_DISTINCT_TOKEN_CHARACTERS) {
    return `it repeats too few characters (${new Set(token).size} distinct, at least ${MIN_DISTINCT_TOKEN_CHARACTERS} needed) to be random; ${GENERATE_TOKEN_HINT}`;
  }
  return undefined;
}

// URLBRIDGE_TRUSTED_PROXIES

export interface Cidr {
  address: string;
  prefix: number;
  family: "ipv4" | "ipv6";
}

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

const TRUSTED_HOST_NAME =
  /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i;

/** A trusted-proxy entry: an address or range, or a host name (the tunnel's compose service); undefined when neither. */
export function parseTrustedProxy(entry: string): { cidr: Cidr } | { name: string } | undefined {
  const cidr = parseCidr(entry);
  if (cidr) return { cidr };
  const name = entry.trim().toLowerCase();
  return TRUSTED_HOST_NAME.test(name) && !/^[\d.]+$/.test(name) ? { name } : undefined;
}

// URLBRIDGE_WEB_ALLOW

const WEB_HOST_NAME =
  /^(?=.{1,253}$)([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

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
  return WEB_HOST_NAME.test(normalizeHostName(bare))
    ? undefined
    : `"${entry}" is neither a host name nor an IP address or CIDR range`;
}
