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

/** Walks `s`, handing each escape that decodes (its letter: "n", "~", "u"...) and each other run of text to `emit`. */
function scanTilde(s: string, emit: (text: string, escape: string | undefined) => void): void {
  let i = 0;
  while (i < s.length) {
    const at = s.indexOf("~", i);
    if (at === -1) {
      emit(s.slice(i), undefined);
      return;
    }
    if (at > i) emit(s.slice(i, at), undefined);
    const next = s[at + 1];
    if (next !== undefined && next in SIMPLE) {
      emit(SIMPLE[next]!, next);
      i = at + 2;
      continue;
    }
    const decoded = next === "u" ? decodeUnicode(s, at) : undefined;
    if (decoded) {
      emit(decoded.text, "u");
      i = at + decoded.length;
      continue;
    }
    emit("~", undefined);
    i = at + 1;
  }
}

export function decodeTilde(s: string): string {
  if (!s.includes("~")) return s;
  let out = "";
  scanTilde(s, (text) => {
    out += text;
  });
  return out;
}

/** The escapes `s` uses that decode (by letter: "n", "s", "~", "u"...): empty when the ~ grammar would change nothing. */
export function tildeEscapesIn(s: string): Set<string> {
  const used = new Set<string>();
  if (!s.includes("~")) return used;
  scanTilde(s, (_text, escape) => {
    if (escape !== undefined) used.add(escape);
  });
  return used;
}
