// Whether the ~ of one target are escapes (the ~ grammar) or literal text a percent-encoder left as is:
// declared by enc=, or decided from evidence in the target as the client wrote it. Standard encoders
// (encodeURIComponent, urllib.parse.quote, Go's QueryEscape, curl) leave ~ unencoded, and the others write
// %7E, which decodes to the same ~ (issue 27). Rules and table: docs/TRANSPORT_GYM.md ("Tilde from evidence").
import { ErrorCode, ToolError } from "../errors.js";
import { decodePercent } from "./percent.js";
import { tildeEscapesIn } from "./tilde.js";

export type TildeReading = "escapes" | "literal";

/**
 * Why a target's ~ were read the way they were: "declared" (enc=), "inactive" (no ~ escape anywhere, both
 * readings agree), "evidence" (the target says it), "weak" (it leans one way but a proxy could have made it
 * so) or "undecided" (nothing says: the protocol's ~ grammar, with a notice). Only the last two are a guess.
 */
export type TildeBasis = "declared" | "inactive" | "evidence" | "weak" | "undecided";

export interface TildeDecision {
  reading: TildeReading;
  basis: TildeBasis;
}

/** The declaration parameter: enc=pct (percent-encoded, ~ is literal) or enc=tilde (~ escapes). */
export const DECLARATION_KEY = "enc";
const DECLARED: Record<string, TildeReading> = { pct: "literal", percent: "literal", tilde: "escapes" };

/** The reading a declaration value names, or undefined when it names none. */
export function declaredReading(value: string): TildeReading | undefined {
  return DECLARED[value.trim().toLowerCase()];
}

export function declarationValue(reading: TildeReading): string {
  return reading === "literal" ? "pct" : "tilde";
}

export interface TildeComponent {
  /** The value or tail exactly as received. */
  raw: string;
  /** After + and the plan's percent layers, before ~. */
  beforeTilde: string;
  /** The raw tail, where a reference-encoded = is never escaped (encodeQueryValue writes %3D before raw=). */
  tail: boolean;
}

// Encoded LF, CR, tab, #, %, &: the ~ grammar writes these as ~n ~r ~t ~h ~p ~a, a reader never escapes them
// in typed text (WHATWG parsers strip LF, CR and tab, # starts a fragment, & splits the query), and no proxy
// makes them from text that had none. Only a percent-encoder (the agent's own) writes them.
const ENCODED_BY_AGENT = /%(?:0[9AaDd]|2[356])/;
// A raw character no standard encoder leaves raw. The union of what they keep: letters, digits, - _ . ~
// (all), ! * ' ( ) (encodeURIComponent), / (quote), * (URLSearchParams, Java), + for a space (form encoders).
const NEVER_LEFT_BY_ENCODERS = /[^A-Za-z0-9\-_.~!*'()/+%]|%(?![0-9A-Fa-f]{2})/;
// Escaped ! $ ( ) * , / : ; ? @ (and = in the tail): a WHATWG reader and the reference encoder leave these
// raw, an encoder escapes them. ' is not here: a WHATWG reader escapes it in a query.
const RESERVED_ESCAPED = /%(?:2[1489AaCcFf]|3[AaBbFf]|40)/;
const EQUALS_ESCAPED = /%3[Dd]/;
const TILDE_ESCAPED = /%7[Ee]/;
const ENCODED_SPACE = /%20|\+/;
const ENCODED_PLUS = /%2[Bb]/;
const ENCODED_HASH = /%23/;

/**
 * Whether some reading of a target holding `sent` could take its ~ literally: any literal mark anywhere, ignoring
 * the evidence that would keep the grammar. For bounds on a URL refused before it is parsed.
 */
export function mayReadTildeLiterally(sent: string): boolean {
  return (
    ENCODED_BY_AGENT.test(sent) ||
    RESERVED_ESCAPED.test(sent) ||
    EQUALS_ESCAPED.test(sent) ||
    TILDE_ESCAPED.test(sent) ||
    sent.includes("%25")
  );
}

/** The component as the client sent it: the plan's extra layers (a proxy's) undone, the client's own one kept. */
function clientForm(raw: string, layers: number): string {
  let current = raw;
  for (let layer = 1; layer < layers && current.includes("%"); layer++) current = decodePercent(current);
  return current;
}

/**
 * Decides the tilde reading of a target from its values and raw tail. Percent-encoded text that carries an
 * agent's fingerprint (an encoded newline, #, % or &) is literal, unless it also spells spaces, + or # only as
 * ~s, ~q, ~h or uses ~u (then undecided); a character no encoder leaves raw, or that spelling, say ~ grammar;
 * an escaped reserved character beside a raw ~ (or %7E beside + spaces) leans literal. Nothing, or both: the
 * ~ grammar, and the caller adds a notice.
 */
export function decideTilde(
  components: readonly TildeComponent[],
  layers: number,
  declared?: TildeReading,
): TildeDecision {
  if (declared) return { reading: declared, basis: "declared" };
  const escapes = new Set<string>();
  for (const c of components) for (const e of tildeEscapesIn(c.beforeTilde)) escapes.add(e);
  if (escapes.size === 0) return { reading: "escapes", basis: "inactive" };

  const forms = components.map((c) => ({ text: clientForm(c.raw, layers), tail: c.tail }));
  // Spaces only as ~s, plus signs only as ~q, # only as ~h, or a ~u escape: the grammar's own spelling of what
  // an encoder writes as %20/+, %2B, %23 and %XX. Unlike a raw character (which a proxy that decodes escapes
  // can produce), no intermediary writes these. (Not ~n, ~p, ~a: numpy's ~np, Erlang's ~p, Lisp's ~a.)
  const none = (re: RegExp) => !forms.some((f) => re.test(f.text));
  const spelledByGrammar =
    (escapes.has("s") && none(ENCODED_SPACE)) ||
    (escapes.has("q") && none(ENCODED_PLUS)) ||
    (escapes.has("h") && none(ENCODED_HASH)) ||
    escapes.has("u");
  if (forms.some((f) => ENCODED_BY_AGENT.test(f.text))) {
    // "sleep~s1~s%26%26~secho": a person who types ~ escapes may still escape an & or # the way URLs taught them.
    return spelledByGrammar ? { reading: "escapes", basis: "undecided" } : { reading: "literal", basis: "evidence" };
  }
  const grammar = forms.some((f) => NEVER_LEFT_BY_ENCODERS.test(f.text)) || spelledByGrammar;
  const rawTilde = forms.some((f) => f.text.includes("~"));
  const encoderLike =
    (rawTilde && forms.some((f) => RESERVED_ESCAPED.test(f.text) || (f.tail && EQUALS_ESCAPED.test(f.text)))) ||
    forms.some((f) => TILDE_ESCAPED.test(f.text) && f.text.includes("+"));
  if (grammar && !encoderLike) return { reading: "escapes", basis: "evidence" };
  if (encoderLike && !grammar) return { reading: "literal", basis: "weak" };
  return { reading: "escapes", basis: "undecided" };
}

/** The refusal for an enc= whose value declares nothing: a declaration is the agent's word, never guessed at. */
export function declarationError(
  declared: { value: string; reading: TildeReading | undefined } | undefined,
): ToolError | undefined {
  if (!declared || declared.reading !== undefined) return undefined;
  return new ToolError(
    ErrorCode.invalidParameter,
    `enc=${JSON.stringify(declared.value)} declares nothing. Use enc=pct when you percent-encoded the text yourself (its ~ are literal), enc=tilde when it is written with ~ escapes.`,
    { detail: { parameter: DECLARATION_KEY, value: declared.value, accepted: ["pct", "tilde"] } },
  );
}
