// Which session and base a capability token in the URL path opens. Valid read/mutation tokens are cached until
// any project, session or capability changes (store.scope); unknown, malformed and wrong-kind tokens always
// take the same database path, so timing does not tell them apart.
import type { CapabilityBase } from "../kernel/tool/definition.js";
import type { Authenticated } from "../edge/capability.js";
import type { Store } from "../store/index.js";
import type { CapabilityLookup } from "../store/sessions.js";

const TOKEN = /^[A-Za-z0-9]{8}$/;

// The shape both edges receive lives in edge/capability.ts; gateway modules keep this name.
export type { Authenticated } from "../edge/capability.js";

/** The capability a token names, through the same query for every shape of token. */
export function lookupCapability(store: Store, token: string): CapabilityLookup | undefined {
  return store.sessions.lookup(TOKEN.test(token) ? token : "________");
}

function baseOf(kind: CapabilityLookup["kind"]): CapabilityBase | undefined {
  return kind === "read" ? "r" : kind === "mutation" ? "m" : undefined;
}

/** Returns authenticate(token): the read or mutation capability it opens, or undefined for anything else. */
export function createAuthenticator(store: Store): (token: string) => Authenticated | undefined {
  const cache = new Map<string, Authenticated>();
  let cacheScope = -1;

  return (token) => {
    if (cacheScope !== store.scope.value) {
      cache.clear();
      cacheScope = store.scope.value;
    }
    const cached = cache.get(token);
    if (cached) return cached;
    const cap = lookupCapability(store, token);
    if (!cap) return undefined;
    const base = baseOf(cap.kind);
    if (!base) return undefined;
    const caps = store.sessions.capabilitiesFor(cap.sessionId, cap.generation);
    if (!caps.read) return undefined;
    const auth: Authenticated = { cap, base, tokens: { r: caps.read, m: caps.mutation } };
    cache.set(token, auth);
    return auth;
  };
}
