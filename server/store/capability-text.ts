// No live capability at rest in stored text (issue 28, item 1): a recorded answer's URLs carry the session's
// tokens (a `retry`, a `read`, a `poll`), so the journal stores each of the session generation's tokens as a
// placeholder and puts the token back when the row is read. The encoding is an escape, so it round-trips any text.
import type { CapabilityKind } from "./sessions.js";

/**
 * Starts every placeholder; a private-use character, so real text rarely holds it, and where it does it is
 * stored doubled (MARK + "0") so that decoding gives it back unchanged.
 */
const MARK = "\uE000";
const LETTER: Record<CapabilityKind, string> = { init: "i", read: "r", mutation: "m" };
const KIND_OF: Record<string, CapabilityKind> = { i: "init", r: "read", m: "mutation" };
const PLACEHOLDER = new RegExp(`${MARK}([0irm])`, "g");
/** What a placeholder reads as when its generation's token is gone (the session was rotated, disabled or deleted). */
export const ENDED_CAPABILITY = "capability-ended";

export type CapabilityTokens = Partial<Record<CapabilityKind, string>>;

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The text with each of `tokens` (and any MARK already in it) replaced by its placeholder. */
export function concealCapabilities(text: string, tokens: CapabilityTokens): string {
  const byToken = new Map<string, string>();
  for (const kind of Object.keys(LETTER) as CapabilityKind[]) {
    const token = tokens[kind];
    if (token) byToken.set(token, MARK + LETTER[kind]);
  }
  const needles = [MARK, ...[...byToken.keys()].sort((a, b) => b.length - a.length).map(escapeRegExp)];
  return text.replace(new RegExp(needles.join("|"), "g"), (hit) => byToken.get(hit) ?? MARK + "0");
}

/** The stored text with its placeholders replaced by `tokens`, the inverse of concealCapabilities. */
export function revealCapabilities(text: string, tokens: CapabilityTokens): string {
  if (!text.includes(MARK)) return text;
  return text.replace(PLACEHOLDER, (_, letter: string) => (letter === "0" ? MARK : (tokens[KIND_OF[letter]!] ?? ENDED_CAPABILITY)));
}

/** Conceals and reveals one session generation's stored text; the store builds it over the sealed capabilities. */
export interface CapabilityText {
  conceal(text: string, sessionId: string, generation: number): string;
  reveal(text: string, sessionId: string, generation: number): string;
}

/**
 * Over a lookup of a generation's tokens (sessions.capabilitiesFor, which opens sealed values). Lookups are cached
 * per generation while `version()` (the store's scope version, bumped on every capability write) stays the same.
 */
export function createCapabilityText(tokensOf: (sessionId: string, generation: number) => CapabilityTokens, version: () => number): CapabilityText {
  let cachedAt = -1;
  const cache = new Map<string, CapabilityTokens>();
  const lookup = (sessionId: string, generation: number): CapabilityTokens => {
    if (cachedAt !== version()) {
      cache.clear();
      cachedAt = version();
    }
    const key = `${sessionId}\n${generation}`;
    let tokens = cache.get(key);
    if (!tokens) {
      tokens = tokensOf(sessionId, generation);
      cache.set(key, tokens);
    }
    return tokens;
  };
  return {
    conceal: (text, sessionId, generation) => concealCapabilities(text, lookup(sessionId, generation)),
    reveal: (text, sessionId, generation) => revealCapabilities(text, lookup(sessionId, generation)),
  };
}
