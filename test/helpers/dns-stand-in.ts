// Stand-in for DNS at the process boundary (labelled as such): a resolver with scripted answers per name, each
// lookup counted, injected into the web tools as their `resolve` dependency (server/kernel/web/guard/vet.ts).
import type { ResolvedAddress, WebResolver } from "../../server/kernel/web/guard/vet.js";

export interface DnsStandIn {
  resolve: WebResolver;
  /** How many times each name was looked up. */
  lookups: Map<string, number>;
}

const family = (address: string): 4 | 6 => (address.includes(":") ? 6 : 4);

/**
 * `answers[name]` lists what successive lookups of that name return (the last one repeats), so a name whose
 * resolution changes between two lookups (DNS rebinding) is one entry with two answers. Unknown names: ENOTFOUND.
 * Names in `silent` never answer (an unreachable DNS server).
 */
export function createDnsStandIn(answers: Record<string, string[][]>, silent: readonly string[] = []): DnsStandIn {
  const lookups = new Map<string, number>();
  return {
    lookups,
    resolve: async (hostname) => {
      const seen = lookups.get(hostname) ?? 0;
      lookups.set(hostname, seen + 1);
      if (silent.includes(hostname)) return new Promise<never>(() => undefined);
      const script = answers[hostname];
      if (!script) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
      const answer = script[Math.min(seen, script.length - 1)]!;
      return answer.map((address): ResolvedAddress => ({ address, family: family(address) }));
    },
  };
}
