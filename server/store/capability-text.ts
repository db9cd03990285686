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
/** What a placeholder reads as when its generation's token is gone (the session was rotated, disabled or deleted). */
export const ENDED_CAPABILITY = "capability-ended";

export type CapabilityTokens = Partial<Record<CapabilityKind, string>>;

/** One generation's tokens, prepared once, with their placeholders. */
export interface CapabilityCodec {
  conceal(text: string): string;
  reveal(stored: string): string;
  /** Whether any token was known when it was made. */
  readonly hasTokens: boolean;
}

export function createCapabilityCodec(tokens: CapabilityTokens): CapabilityCodec {
  const byToken = new Map<string, string>();
  const byLetter = new Map<string, string>([["0", MARK]]);
  for (const kind of Object.keys(LETTER) as CapabilityKind[]) {
    const token = tokens[kind];
    if (token) byToken.set(token, MARK + LETTER[kind]);
    byLetter.set(LETTER[kind], token || ENDED_CAPABILITY);
  }
  // MARK first: its escape must win over nothing else, and tokens (base62) never contain it.
  const needles = [MARK, ...byToken.keys()];
  const replacements = [MARK + "0", ...byToken.values()];
  return {
    hasTokens: byToken.size > 0,
    /**
     * One left-to-right pass (not one replace per token, where a placeholder's letter and the text after it could
     * spell another token); indexOf per needle rather than one alternation regex, which is ~30x slower on long text.
     */
    conceal(text) {
      const next = needles.map((needle) => text.indexOf(needle));
      if (next.every((at) => at < 0)) return text;
      let out = "";
      let from = 0;
      for (;;) {
        let pick = -1;
        for (let i = 0; i < next.length; i++) if (next[i]! >= 0 && (pick < 0 || next[i]! < next[pick]!)) pick = i;
        if (pick < 0) return out + text.slice(from);
        out += text.slice(from, next[pick]) + replacements[pick];
        from = next[pick]! + needles[pick]!.length;
        for (let i = 0; i < next.length; i++)
          if (next[i]! >= 0 && next[i]! < from) next[i] = text.indexOf(needles[i]!, from);
      }
    },
    reveal(stored) {
      let at = stored.indexOf(MARK);
      if (at < 0) return stored;
      let out = "";
      let from = 0;
      while (at >= 0) {
        const value = byLetter.get(stored.charAt(at + 1));
        // Only concealCapabilities writes MARK, always followed by a letter; anything else stays as it is.
        if (value === undefined) {
          out += stored.slice(from, at + 1);
          from = at + 1;
        } else {
          out += stored.slice(from, at) + value;
          from = at + 2;
        }
        at = stored.indexOf(MARK, from);
      }
      return out + stored.slice(from);
    },
  };
}

/** The text with each of `tokens` (and any MARK already in it) replaced by its placeholder. */
export function concealCapabilities(text: string, tokens: CapabilityTokens): string {
  return createCapabilityCodec(tokens).conceal(text);
}

/** The stored text with its placeholders replaced by `tokens`, the inverse of concealCapabilities. */
export function revealCapabilities(text: string, tokens: CapabilityTokens): string {
  return createCapabilityCodec(tokens).reveal(text);
}

/** Conceals and reveals one session generation's stored text; the store builds it over the sealed capabilities. */
export interface CapabilityText {
  conceal(text: string, sessionId: string, generation: number): string;
  reveal(text: string, sessionId: string, generation: number): string;
  /** Keeps the generation's tokens for conceal() from now on, even once it ends (call while they are on record). */
  retain(sessionId: string, generation: number): void;
}

/**
 * Over a lookup of a generation's tokens (sessions.capabilitiesFor, which opens sealed values). Lookups are cached
 * per generation while `version()` (the store's scope version, bumped on every capability write) stays the same.
 */
export function createCapabilityText(
  tokensOf: (sessionId: string, generation: number) => CapabilityTokens,
  version: () => number,
): CapabilityText {
  let cachedAt = -1;
  const cache = new Map<string, CapabilityCodec>();
  const codecOf = (sessionId: string, generation: number): CapabilityCodec => {
    if (cachedAt !== version()) {
      cache.clear();
      cachedAt = version();
    }
    const key = `${sessionId}\n${generation}`;
    let codec = cache.get(key);
    if (!codec) {
      codec = createCapabilityCodec(tokensOf(sessionId, generation));
      cache.set(key, codec);
    }
    return codec;
  };
  /**
   * The last codec with tokens of each generation this process concealed with, kept after the generation ends (a
   * rotation, a disable, a delete): a row of it written late, such as an intent that finishes after its session was
   * rotated, is concealed with the tokens it was made under, never stored in the clear. Reveal does not use it: a
   * placeholder of an ended generation reads as ENDED_CAPABILITY. Bounded, oldest dropped first.
   */
  const retained = new Map<string, CapabilityCodec>();
  const concealerOf = (sessionId: string, generation: number): CapabilityCodec => {
    const codec = codecOf(sessionId, generation);
    const key = `${sessionId}\n${generation}`;
    if (!codec.hasTokens) return retained.get(key) ?? codec;
    if (retained.get(key) !== codec) {
      retained.delete(key);
      retained.set(key, codec);
      if (retained.size > MAX_RETAINED_GENERATIONS) retained.delete(retained.keys().next().value!);
    }
    return codec;
  };
  return {
    conceal: (text, sessionId, generation) => concealerOf(sessionId, generation).conceal(text),
    reveal: (text, sessionId, generation) => codecOf(sessionId, generation).reveal(text),
    retain: (sessionId, generation) => void concealerOf(sessionId, generation),
  };
}

/** Generations whose tokens conceal() keeps after they end (a few hundred bytes each). */
const MAX_RETAINED_GENERATIONS = 4096;
