// Parses a raw query string without ever re-serializing it: control parameters before raw=, and the
// raw tail, which is everything after the first raw= and is content, not query syntax. How many percent
// layers to remove and what + means is decided once for the whole target (decoding.ts).
import { decodeComponent, planDecoding, type DecodingPlan } from "./decoding.js";
import { decodeQueryComponent } from "./percent.js";
import { decodeTilde } from "./tilde.js";

export interface QuerySegment {
  /** Exactly as received, for rebuilding repair URLs byte for byte. */
  rawKey: string;
  rawValue: string | undefined;
  key: string;
  /** +, percent and ~ decoded. */
  value: string;
}

export interface RawTail {
  /** Exactly as received after "raw=". */
  rawText: string;
  /** + and percent decoded, ~ not yet. */
  beforeTilde: string;
  /** Fully decoded content. */
  text: string;
}

export interface ParsedQuery {
  segments: QuerySegment[];
  raw: RawTail | undefined;
  /** How this target was read: percent layers and the meaning of +. */
  plan: DecodingPlan;
}

/** Decodes one raw value or tail under a plan: + and the plan's percent layers, then ~. */
export function decodeValueWith(rawValue: string, plan: DecodingPlan): string {
  return decodeTilde(decodeComponent(rawValue, plan));
}

interface RawPieces {
  segments: Array<{ rawKey: string; rawValue: string | undefined }>;
  rawText: string | undefined;
}

function splitQuery(rawQuery: string): RawPieces {
  const segments: RawPieces["segments"] = [];
  let offset = 0;
  while (offset <= rawQuery.length) {
    const amp = rawQuery.indexOf("&", offset);
    const end = amp === -1 ? rawQuery.length : amp;
    const piece = rawQuery.slice(offset, end);
    if (piece.length > 0) {
      const eq = piece.indexOf("=");
      const rawKey = eq === -1 ? piece : piece.slice(0, eq);
      // A key is read on its own: "raw" never needs evidence from the rest of the target to be recognised.
      if (decodeQueryComponent(rawKey) === "raw") return { segments, rawText: eq === -1 ? "" : rawQuery.slice(offset + eq + 1) };
      segments.push({ rawKey, rawValue: eq === -1 ? undefined : piece.slice(eq + 1) });
    }
    if (amp === -1) break;
    offset = amp + 1;
  }
  return { segments, rawText: undefined };
}

/** The components whose layers and + the plan is decided on. */
function componentsOf(pieces: RawPieces): string[] {
  const out: string[] = [];
  for (const s of pieces.segments) {
    out.push(s.rawKey);
    if (s.rawValue !== undefined) out.push(s.rawValue);
  }
  if (pieces.rawText !== undefined) out.push(pieces.rawText);
  return out;
}

/** Parses a query; `plan` forces a reading (used to show the other reading of an ambiguous target). */
export function parseQuery(rawQuery: string, plan?: DecodingPlan): ParsedQuery {
  const pieces = splitQuery(rawQuery);
  const used = plan ?? planDecoding(componentsOf(pieces));
  const segments = pieces.segments.map(({ rawKey, rawValue }) => ({
    rawKey,
    rawValue,
    key: decodeComponent(rawKey, used),
    value: rawValue === undefined ? "" : decodeValueWith(rawValue, used),
  }));
  if (pieces.rawText === undefined) return { segments, raw: undefined, plan: used };
  const beforeTilde = decodeComponent(pieces.rawText, used);
  return { segments, raw: { rawText: pieces.rawText, beforeTilde, text: decodeTilde(beforeTilde) }, plan: used };
}
