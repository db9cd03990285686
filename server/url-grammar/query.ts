// Parses a raw query string without ever re-serializing it: control parameters before raw=, and the
// raw tail, which is everything after the first raw= and is content, not query syntax.
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
}

export function decodeValue(rawValue: string): string {
  return decodeTilde(decodeQueryComponent(rawValue));
}

export function parseQuery(rawQuery: string): ParsedQuery {
  const segments: QuerySegment[] = [];
  let offset = 0;
  while (offset <= rawQuery.length) {
    const amp = rawQuery.indexOf("&", offset);
    const end = amp === -1 ? rawQuery.length : amp;
    const piece = rawQuery.slice(offset, end);
    if (piece.length > 0) {
      const eq = piece.indexOf("=");
      const rawKey = eq === -1 ? piece : piece.slice(0, eq);
      const key = decodeQueryComponent(rawKey);
      if (key === "raw") {
        const rawText = eq === -1 ? "" : rawQuery.slice(offset + eq + 1);
        const beforeTilde = decodeQueryComponent(rawText);
        return { segments, raw: { rawText, beforeTilde, text: decodeTilde(beforeTilde) } };
      }
      const rawValue = eq === -1 ? undefined : piece.slice(eq + 1);
      segments.push({ rawKey, rawValue, key, value: rawValue === undefined ? "" : decodeValue(rawValue) });
    }
    if (amp === -1) break;
    offset = amp + 1;
  }
  return { segments, raw: undefined };
}
