// The ~ escape grammar: short, ASCII-only escapes that survive every URL reader we know of.
// Unknown or malformed escapes are kept verbatim, never guessed.

const SIMPLE: Record<string, string> = {
  n: "\n",
  r: "\r",
  t: "\t",
  h: "#",
  p: "%",
  q: "+",
  s: " ",
  a: "&",
  "~": "~",
};

const HEX4 = /^[0-9A-Fa-f]{4}$/;
const BRACED = /^\{([0-9A-Fa-f]{1,6})\}/;

const isHigh = (u: number) => u >= 0xd800 && u <= 0xdbff;
const isLow = (u: number) => u >= 0xdc00 && u <= 0xdfff;

function codeUnitAt(s: string, i: number): number | undefined {
  if (s[i] !== "~" || s[i + 1] !== "u") return undefined;
  const hex = s.slice(i + 2, i + 6);
  return HEX4.test(hex) ? parseInt(hex, 16) : undefined;
}

/** Decodes one ~u escape at i; returns the text and how many characters it consumed, or undefined when malformed. */
function decodeUnicode(s: string, i: number): { text: string; length: number } | undefined {
  const braced = BRACED.exec(s.slice(i + 2, i + 10));
  if (braced) {
    const cp = parseInt(braced[1]!, 16);
    if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return undefined;
    return { text: String.fromCodePoint(cp), length: 2 + braced[0].length };
  }
  const unit = codeUnitAt(s, i);
  if (unit === undefined) return undefined;
  if (isLow(unit)) return undefined;
  if (!isHigh(unit)) return { text: String.fromCharCode(unit), length: 6 };
  const low = codeUnitAt(s, i + 6);
  if (low === undefined || !isLow(low)) return undefined;
  return { text: String.fromCharCode(unit, low), length: 12 };
}

export function decodeTilde(s: string): string {
  if (!s.includes("~")) return s;
  let out = "";
  let i = 0;
  while (i < s.length) {
    const ch = s[i]!;
    if (ch !== "~") {
      out += ch;
      i += 1;
      continue;
    }
    const next = s[i + 1];
    if (next !== undefined && next in SIMPLE) {
      out += SIMPLE[next];
      i += 2;
      continue;
    }
    if (next === "u") {
      const decoded = decodeUnicode(s, i);
      if (decoded) {
        out += decoded.text;
        i += decoded.length;
        continue;
      }
    }
    out += "~";
    i += 1;
  }
  return out;
}
