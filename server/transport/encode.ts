// The reference encoder for the ~ grammar: what the server uses for every URL it hands out, and what a
// client library should do. Output is plain ASCII that decodes back to the same text under any single
// +/percent rewriting an intermediary applies.

const ESCAPES: Record<string, string> = {
  "~": "~~",
  "\n": "~n",
  "\r": "~r",
  "\t": "~t",
  "#": "~h",
  "%": "~p",
  "+": "~q",
  "&": "~a",
  " ": "+",
};

// RFC 3986 characters a URL reader passes through untouched inside a query value.
const SAFE = /[A-Za-z0-9\-._!$'()*,;=:@/?]/;

/** Encodes text for a query value or raw= tail. Non-ASCII becomes percent-encoded UTF-8. */
export function encodeUrlText(text: string): string {
  let out = "";
  for (const ch of text) {
    const escape = ESCAPES[ch];
    if (escape !== undefined) out += escape;
    else if (SAFE.test(ch)) out += ch;
    else out += encodeURIComponent(ch);
  }
  return out;
}

/** Like encodeUrlText, but for a value that is not last: = and ? are percent-encoded too so keys stay unambiguous. */
export function encodeQueryValue(text: string): string {
  return encodeUrlText(text).replace(/=/g, "%3D");
}
