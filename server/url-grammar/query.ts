// Parses a raw query string without ever re-serializing it: control parameters before raw=, and the
// raw tail, which is everything after the first raw= and is content, not query syntax. How many percent
// layers to remove and what + means is decided once for the whole target (decoding.ts), and so is whether ~
// starts an escape (decoding-tilde.ts): declared by enc=, or read from evidence.
import { decodeComponent, planDecoding, type DecodingPlan } from "./decoding.js";
import { decideTilde, declaredReading, DECLARATION_KEY, type TildeBasis, type TildeReading } from "./decoding-tilde.js";
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

/** The enc= declaration, kept out of `segments` (no tool has such a parameter) and put back into every URL built from this one. */
export interface Declaration {
  rawKey: string;
  rawValue: string | undefined;
  /** The reading it declares, or undefined when its value names none (the call is refused). */
  reading: TildeReading | undefined;
  value: string;
}

export interface ParsedQuery {
  segments: QuerySegment[];
  raw: RawTail | undefined;
  /** How this target was read: percent layers, the meaning of + and of ~. */
  plan: DecodingPlan;
  /** Why ~ was read as plan.tilde says. */
  tildeBasis: TildeBasis;
  declaration: Declaration | undefined;
}

/** Decodes one raw value or tail under a plan: + and the plan's percent layers, then ~ unless the plan reads it literally. */
export function decodeValueWith(rawValue: string, plan: DecodingPlan): string {
  const text = decodeComponent(rawValue, plan);
  return plan.tilde === "escapes" ? decodeTilde(text) : text;
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
      if (decodeQueryComponent(rawKey) === "raw")
        return { segments, rawText: eq === -1 ? "" : rawQuery.slice(offset + eq + 1) };
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

/** The first enc= segment, taken out of the segments (a second one stays in and is refused as a conflict). */
function takeDeclaration(pieces: RawPieces): Declaration | undefined {
  const at = pieces.segments.findIndex((s) => decodeQueryComponent(s.rawKey) === DECLARATION_KEY);
  if (at === -1) return undefined;
  const [{ rawKey, rawValue }] = pieces.segments.splice(at, 1) as [RawPieces["segments"][number]];
  const value = rawValue === undefined ? "" : decodeQueryComponent(rawValue);
  return { rawKey, rawValue, reading: declaredReading(value), value };
}

/** Parses a query; `plan` forces a reading (used to show the other reading of an ambiguous target). */
export function parseQuery(rawQuery: string, plan?: DecodingPlan): ParsedQuery {
  const pieces = splitQuery(rawQuery);
  const declaration = takeDeclaration(pieces);
  const percent = plan ?? planDecoding(componentsOf(pieces));
  const contents = [
    ...pieces.segments.flatMap((s) => (s.rawValue === undefined ? [] : [{ raw: s.rawValue, tail: false }])),
    ...(pieces.rawText === undefined ? [] : [{ raw: pieces.rawText, tail: true }]),
  ].map((c) => ({ ...c, beforeTilde: decodeComponent(c.raw, percent) }));
  const decided = plan
    ? { reading: plan.tilde, basis: "declared" as const }
    : decideTilde(contents, percent.layers, declaration?.reading);
  const used: DecodingPlan = { ...percent, tilde: decided.reading };
  const segments = pieces.segments.map(({ rawKey, rawValue }) => ({
    rawKey,
    rawValue,
    key: decodeComponent(rawKey, used),
    value: rawValue === undefined ? "" : decodeValueWith(rawValue, used),
  }));
  const base = { segments, plan: used, tildeBasis: decided.basis, declaration };
  if (pieces.rawText === undefined) return { ...base, raw: undefined };
  const beforeTilde = decodeComponent(pieces.rawText, used);
  return {
    ...base,
    raw: {
      rawText: pieces.rawText,
      beforeTilde,
      text: used.tilde === "escapes" ? decodeTilde(beforeTilde) : beforeTilde,
    },
  };
}
