// The `decoding` field of an answer: when a target was read in a way that changed its content beyond one
// percent layer (a further layer removed, or a + on the wire read either way), the agent is told, and handed the exact
// URL of the other reading, written with the reference encoder so that it cannot be misread in turn.
import type { DecodingPlan } from "./decoding.js";
import { decodeValueWith } from "./query.js";
import { buildUrl, type RequestUrl } from "./request-url.js";

export interface OtherReading {
  /** What differs in that reading: "1 percent layer", "+ as a plus". */
  reading: string;
  url: string;
}

export interface DecodingNotice {
  /** Percent layers removed from this target. */
  percentLayers: number;
  /** What a + on the wire was read as. */
  plus: "space" | "plus";
  hint: string;
  otherReadings: OtherReading[];
}

const layersText = (n: number) => `${n} percent layer${n === 1 ? "" : "s"}`;

/** The same call under another plan, re-encoded; `call` is left out, since its id names other arguments. */
function readingUrl(url: RequestUrl, plan: DecodingPlan): string {
  const params: Array<[string, string]> = [];
  for (const s of url.query.segments) {
    if (s.key === "call") continue;
    params.push([s.key, s.rawValue === undefined ? "" : decodeValueWith(s.rawValue, plan)]);
  }
  const raw = url.query.raw === undefined ? undefined : decodeValueWith(url.query.raw.rawText, plan);
  return buildUrl(url.origin, url.basePath, url.route, params, raw);
}

/** The notice for a call, or undefined when the target was read in the one way it could mean. */
export function decodingNotice(url: RequestUrl): DecodingNotice | undefined {
  const { plan } = url.query;
  const extraLayers = plan.layers >= 2;
  // A + on the wire in a value or the tail was read one way or the other; the notice offers the other reading
  // (read as plus signs because the target carried %20 spaces, a client that wrote + for spaces gets it too).
  const wirePlus = url.query.segments.some((s) => s.rawValue?.includes("+")) || (url.query.raw?.rawText.includes("+") ?? false);
  const plusAsSpace = wirePlus && plan.plusIsSpace;
  const plusAsPlus = wirePlus && !plan.plusIsSpace;
  if (!extraLayers && !wirePlus) return undefined;

  const otherReadings: OtherReading[] = [];
  if (extraLayers) otherReadings.push({ reading: layersText(plan.layers - 1), url: readingUrl(url, { ...plan, layers: plan.layers - 1 }) });
  if (plusAsSpace) otherReadings.push({ reading: "+ as a plus", url: readingUrl(url, { ...plan, plusIsSpace: false }) });
  if (plusAsPlus) otherReadings.push({ reading: "+ as a space", url: readingUrl(url, { ...plan, plusIsSpace: true }) });
  const what = [
    extraLayers ? `removed ${layersText(plan.layers)} (a proxy or reader encoded the URL again)` : "",
    plusAsSpace ? "read + as a space" : "",
    plusAsPlus ? "read + as a plus sign, because this URL carries its spaces as %20" : "",
  ]
    .filter(Boolean)
    .join(" and ");
  return {
    percentLayers: plan.layers,
    plus: plan.plusIsSpace ? "space" : "plus",
    hint: `This URL was ambiguous: the bridge ${what}. If you meant the other reading, fetch its url (written with ~ escapes, so it reads one way only): ~p for a literal %, ~q for a literal +.`,
    otherReadings,
  };
}
