// The reference encoder for the ~ grammar: what the server uses for every URL it hands out, and what a
// client library should do. Its rules and the reasons for them are in docs/TRANSPORT_GYM.md ("Encoder").

const ESCAPES: Record<string, string> = {
  "~": "~~",
  "\n": "~n",
  "\r": "~r",
  "\t": "~t",
  "#": "~h",
  "%": "~p",
  "+": "~q",
  "&": "~a",
  // Not "+": a proxy that percent-encodes every reserved character turns + into %2B, a literal plus.
  " ": "~s",
};

// RFC 3986 unreserved characters and the sub-delimiters no reader we know rewrites inside a query.
const VERBATIM = /^[A-Za-z0-9\-._!$'()*,;=:@/?]$/;
// Printable ASCII that readers encode or mangle (quotes, brackets that curl globs, backslash...): %XX is
// short, survives a proxy that decodes it back to the character, and a proxy that encodes it again.
const PERCENT = /^[ -~]$/;

const hex4 = (unit: number) => unit.toString(16).toUpperCase().padStart(4, "0");

function encodeCharacter(ch: string): string {
  const escape = ESCAPES[ch];
  if (escape !== undefined) return escape;
  if (VERBATIM.test(ch)) return ch;
  if (PERCENT.test(ch)) return `%${ch.charCodeAt(0).toString(16).toUpperCase()}`;
  const cp = ch.codePointAt(0)!;
  // A lone surrogate has no UTF-8 form; U+FFFD is what it becomes on disk, so that is what we send.
  if (cp >= 0xd800 && cp <= 0xdfff) return "~uFFFD";
  // Controls and non-ASCII as ~u escapes: plain ASCII on the wire, no bytes a reader could re-encode or
  // reject, and never longer than their percent-encoded UTF-8.
  return cp > 0xffff ? `~u{${cp.toString(16).toUpperCase()}}` : `~u${hex4(cp)}`;
}

/**
 * Encodes text for a query value or the raw= tail. The output is printable ASCII, contains no + and no
 * encoded percent sign, and decodes back to the same text under every transform in the gym's matrix.
 */
export function encodeUrlText(text: string): string {
  let out = "";
  for (const ch of text) out += encodeCharacter(ch);
  return out;
}

/** Like encodeUrlText, for a value that is not last: = is percent-encoded too so the key stays obvious to a reader. */
export function encodeQueryValue(text: string): string {
  return encodeUrlText(text).replace(/=/g, "%3D");
}
