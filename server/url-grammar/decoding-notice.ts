// The `decoding` field of an answer: when a target was read in a way that changed its content beyond one
// percent layer (a further layer removed, a + on the wire read either way, a ~ read as an escape or as text
// without a declaration that said so), the agent is told, and handed the exact URL of the other reading,
// written so that it cannot be misread in turn.
import type { DecodingPlan } from "./decoding.js";
import { DECLARATION_KEY, declarationValue, type TildeReading } from "./decoding-tilde.js";
import { decodeValueWith } from "./query.js";
import { buildUrl, formatUrl, type RequestUrl } from "./request-url.js";

export interface OtherReading {
  /** What differs in that reading: "1 percent layer", "+ as a plus", "~ as literal text (enc=pct)". */
  reading: string;
  url: string;
}

export interface DecodingNotice {
  /** Percent layers removed from this target. */
  percentLayers: number;
  /** What a + on the wire was read as. */
  plus: "space" | "plus";
  /** What a ~ was read as, when that was a guess: escapes (the ~ grammar) or literal text. */
  tilde?: TildeReading;
  hint: string;
  otherReadings: OtherReading[];
  /** When the ~ reading was a guess: this reading, declared, so that repeating it is never a guess. */
  thisReading?: OtherReading;
}

const layersText = (n: number) => `${n} percent layer${n === 1 ? "" : "s"}`;
const tildeText = (reading: TildeReading) =>
  reading === "escapes" ? "~ as escapes (enc=tilde)" : "~ as literal text (enc=pct)";

/**
 * The same call under another plan, re-encoded with the reference encoder and declared enc=tilde (its ~ are
 * escapes), so it reads one way only; `call` is left out, since its id names other arguments.
 */
function readingUrl(url: RequestUrl, plan: DecodingPlan): string {
  const params: Array<[string, string]> = [];
  for (const s of url.query.segments) {
    if (s.key === "call") continue;
    params.push([s.key, s.rawValue === undefined ? "" : decodeValueWith(s.rawValue, plan)]);
  }
  params.push([DECLARATION_KEY, declarationValue("escapes")]);
  const raw = url.query.raw === undefined ? undefined : decodeValueWith(url.query.raw.rawText, plan);
  return buildUrl(url.origin, url.basePath, url.route, params, raw);
}

/** The received URL, byte for byte, with a declaration of `reading` (and without call=): the same bytes, read one way. */
function declaredUrl(url: RequestUrl, reading: TildeReading): string {
  const parts = url.query.segments
    .filter((s) => s.key !== "call")
    .map((s) => (s.rawValue === undefined ? s.rawKey : `${s.rawKey}=${s.rawValue}`));
  parts.push(`${DECLARATION_KEY}=${declarationValue(reading)}`);
  return formatUrl(url.origin, url.basePath, url.route, parts, url.query.raw?.rawText);
}

/** The notice for a call, or undefined when the target was read in the one way it could mean. */
export function decodingNotice(url: RequestUrl): DecodingNotice | undefined {
  const { plan, tildeBasis } = url.query;
  const extraLayers = plan.layers >= 2;
  // A + on the wire in a value or the tail was read one way or the other; the notice offers the other reading
  // (read as plus signs because the target carried %20 spaces, a client that wrote + for spaces gets it too).
  const wirePlus =
    url.query.segments.some((s) => s.rawValue?.includes("+")) || (url.query.raw?.rawText.includes("+") ?? false);
  const plusAsSpace = wirePlus && plan.plusIsSpace;
  const plusAsPlus = wirePlus && !plan.plusIsSpace;
  const tildeGuess = tildeBasis === "weak" || tildeBasis === "undecided";
  if (!extraLayers && !wirePlus && !tildeGuess) return undefined;

  const otherReadings: OtherReading[] = [];
  if (extraLayers)
    otherReadings.push({
      reading: layersText(plan.layers - 1),
      url: readingUrl(url, { ...plan, layers: plan.layers - 1 }),
    });
  if (plusAsSpace)
    otherReadings.push({ reading: "+ as a plus", url: readingUrl(url, { ...plan, plusIsSpace: false }) });
  if (plusAsPlus) otherReadings.push({ reading: "+ as a space", url: readingUrl(url, { ...plan, plusIsSpace: true }) });
  const otherTilde: TildeReading = plan.tilde === "escapes" ? "literal" : "escapes";
  if (tildeGuess) otherReadings.push({ reading: tildeText(otherTilde), url: declaredUrl(url, otherTilde) });
  const what = [
    extraLayers ? `removed ${layersText(plan.layers)} (a proxy or reader encoded the URL again)` : "",
    plusAsSpace ? "read + as a space" : "",
    plusAsPlus ? "read + as a plus sign, because this URL carries its spaces as %20" : "",
    tildeGuess && plan.tilde === "escapes"
      ? "read ~ as escapes (~n newline, ~~ one ~): nothing showed whether a percent-encoder, which leaves ~ as is, wrote this URL"
      : "",
    tildeGuess && plan.tilde === "literal"
      ? "read ~ as literal text, because this URL looks percent-encoded by an encoder that leaves ~ as is"
      : "",
  ]
    .filter(Boolean)
    .join(" and ");
  const escapesAdvice = "~p for a literal %, ~q for a literal +";
  const tildeAdvice =
    "Add enc=pct to a URL whose text you percent-encoded yourself, enc=tilde to one written with ~ escapes: a declared URL is never guessed.";
  return {
    percentLayers: plan.layers,
    plus: plan.plusIsSpace ? "space" : "plus",
    ...(tildeGuess ? { tilde: plan.tilde } : {}),
    hint: `This URL was ambiguous: the bridge ${what}. If you meant another reading, fetch its url${tildeGuess ? "" : ` (written with ~ escapes, so it reads one way only): ${escapesAdvice}`}.${tildeGuess ? ` ${tildeAdvice}` : ""}`,
    otherReadings,
    ...(tildeGuess ? { thisReading: { reading: tildeText(plan.tilde), url: declaredUrl(url, plan.tilde) } } : {}),
  };
}
