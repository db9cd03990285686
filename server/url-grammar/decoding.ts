// How to read one request target: how many percent layers it carries and whether its + are spaces,
// decided once from evidence in the whole target rather than character by character. The rules and the
// reasons for them: docs/TRANSPORT_GYM.md ("Decoding from evidence").
import type { TildeReading } from "./decoding-tilde.js";
import { decodePercent, MAX_PERCENT_LAYERS } from "./percent.js";

export interface DecodingPlan {
  /** Percent layers removed from every key, value and the raw tail (0 when the target has no escape). */
  layers: number;
  /** Whether a + on the wire is a space (form encoding) or a literal plus. */
  plusIsSpace: boolean;
  /**
   * Why decoding stopped: "exhausted" (no escape left, or the layer bound), or "content" (what one layer
   * left is decoded text, not an encoder's output, so its %XX are content: a format string, a URL).
   */
  stop: "exhausted" | "content";
  /** Whether ~ starts an escape or is literal text (decoding-tilde.ts decides; the ~ grammar by default). */
  tilde: TildeReading;
}

const ESCAPE = /%[0-9A-Fa-f]{2}/;
const ESCAPES = /%([0-9A-Fa-f]{2})/g;
const ENCODED_SPACE = /%20/;
// What every standard encoder (encodeURIComponent, urllib.parse.quote, URLSearchParams, a WHATWG URL)
// writes as %XX and never sends raw: space, ", <, >, C0 controls, DEL and everything outside ASCII.
// Seen raw after a decode, it proves that decode produced text, not another encoding layer.
// eslint-disable-next-line no-control-regex
const NEVER_RAW_IN_ENCODED = /[\u0000-\u0020"<>\u007f-\uffff]/;
// RFC 3986 unreserved characters that no standard encoder escapes (~ is left out: older encoders and the
// gym's encode-all proxy write it as %7E). %41 or %2d left after a decode is content ("%2d" of printf).
const NEVER_ESCAPED = /^[A-Za-z0-9._-]$/;

function hasEscape(parts: readonly string[]): boolean {
  return parts.some((p) => ESCAPE.test(p));
}

/** True when `parts`, the result of one decode, could be an encoder's output rather than decoded text. */
function couldBeEncoded(parts: readonly string[]): boolean {
  for (const part of parts) {
    if (NEVER_RAW_IN_ENCODED.test(part)) return false;
    for (const match of part.matchAll(ESCAPES)) {
      if (NEVER_ESCAPED.test(String.fromCharCode(parseInt(match[1]!, 16)))) return false;
    }
  }
  return true;
}

/**
 * Plans the decoding of a target's components (raw keys, raw values and the raw tail, exactly as received).
 *
 * Percent layers: the first is always removed. A further layer is removed only while the result of the
 * previous one could itself be an encoder's output (see couldBeEncoded), across every component at once,
 * up to MAX_PERCENT_LAYERS. So content encoded once by a standard encoder keeps its literal %XX, while a
 * proxy that encoded the whole target again is still undone, layer by layer.
 *
 * Plus: a target that carries its spaces as %20 (in any layer removed) was not written by a form encoder,
 * so its + are literal; otherwise a + is a space, as form encoding and the +-for-space readers mean it.
 */
export function planDecoding(components: readonly string[]): DecodingPlan {
  // + is neither an escape nor evidence, so the layers are decided on the components as received.
  let current = components;
  let layers = 0;
  let spacesAsEscapes = false;
  let stop: DecodingPlan["stop"] = "exhausted";
  while (layers < MAX_PERCENT_LAYERS && hasEscape(current)) {
    if (layers > 0 && !couldBeEncoded(current)) {
      stop = "content";
      break;
    }
    const next = current.map(decodePercent);
    if (next.every((p, i) => p === current[i])) break;
    // Only a %20 that one of the removed layers decoded counts: a literal "%20" left as content does not.
    if (current.some((c) => ENCODED_SPACE.test(c))) spacesAsEscapes = true;
    current = next;
    layers += 1;
  }
  return { layers, plusIsSpace: !spacesAsEscapes, stop, tilde: "escapes" };
}

/** Decodes one component by a plan: + first (only those on the wire), then exactly plan.layers layers. */
export function decodeComponent(s: string, plan: DecodingPlan): string {
  let current = plan.plusIsSpace ? s.replace(/\+/g, " ") : s;
  for (let layer = 0; layer < plan.layers && current.includes("%"); layer++) current = decodePercent(current);
  return current;
}
