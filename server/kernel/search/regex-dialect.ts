// The one regex dialect /g accepts: the common part of Rust's regex (ripgrep) and JavaScript's RegExp
// (the portable engine), rewritten for each so both match the same lines. \d \w \s \b have their
// JavaScript (ASCII) meaning in both. Anything the two engines read differently is refused up front.

export interface TranslatedRegex {
  /** Pattern for ripgrep (Rust regex syntax). */
  rust: string;
  /** Pattern for RegExp with flags "su" (+ "i"). */
  js: string;
  /** Set by leading inline flags: (?i) turns case-insensitive matching on, (?-i) off. */
  ignoreCase?: boolean;
}

export class RegexDialectError extends Error {
  override name = "RegexDialectError";
  constructor(
    message: string,
    readonly index: number,
    /** For case flags inside the pattern: the same pattern without them, to search with ignoreCase=1. */
    readonly ignoreCaseForm?: string,
  ) {
    super(message);
  }
}

/** Characters of JavaScript's \s, spelled out for Rust, whose Unicode \s differs (U+0085, U+FEFF). */
const JS_SPACE_RUST =
  "\\t\\x0B\\x0C\\r \\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}\\x{FEFF}";
const RUST_CLASS_BODY: Record<string, string> = {
  d: "0-9",
  w: "0-9A-Za-z_",
  s: JS_SPACE_RUST,
};
const JS_SYNTAX = new Set("^$\\.*+?()[]{}|/");
const RUST_META = new Set("\\.+*?()|[]{}^$#&-~");
const ASCII_PUNCTUATION = /^[!-/:-@[-`{-~]$/;
/** General categories both engines know by the same short name. */
const PROPERTIES = new Set(
  "L Lu Ll Lt Lm Lo M Mn Mc Me N Nd Nl No P Pc Pd Ps Pe Pi Pf Po S Sm Sc Sk So Z Zs Zl Zp C Cc Cf Co Cn".split(" "),
);
const MAX_REPETITION = 1000;

interface Escape {
  rust: string;
  js: string;
  /** Number of pattern characters consumed after the backslash. */
  length: number;
  kind: "atom" | "assertion";
}

function fail(message: string, index: number): never {
  throw new RegexDialectError(message, index);
}

// Inline flags. Within one line m and s change nothing and u is already on, so only i matters.
const FLAG_GROUP = /^\(\?([A-Za-z-]*)([:)])/;
const HARMLESS_FLAGS = /^[imsu]*$/;
const NO_OP_FLAGS = /^(?=.)[msu]*(?:-[ms]*)?$/;
const LEADING_FLAGS = /^\(\?(-?)([imsu]*)(?:-([imsu]*))?\)/;
const NAMED_GROUP = /^\(\?P?<([A-Za-z_][A-Za-z0-9_]*)>/;

/** Leading (?flags) groups, read as ignoreCase; undefined when the pattern starts with none this can read. */
function leadingFlags(pattern: string): { rest: number; ignoreCase?: boolean } | undefined {
  let at = 0;
  let ignoreCase: boolean | undefined;
  for (;;) {
    const m = LEADING_FLAGS.exec(pattern.slice(at));
    if (!m || m[0] === "(?)" || (m[1] === "-" && m[3] !== undefined)) break;
    const on = m[1] === "-" ? "" : m[2]!;
    const off = m[1] === "-" ? m[2]! : (m[3] ?? "");
    if (off.includes("u")) break;
    if (on.includes("i")) ignoreCase = true;
    if (off.includes("i")) ignoreCase = false;
    at += m[0].length;
  }
  return at === 0 ? undefined : { rest: at, ...(ignoreCase === undefined ? {} : { ignoreCase }) };
}

/**
 * The pattern with its case flags removed ((?i) dropped, (?i:...) read as (?:...)), for a search with
 * ignoreCase=1; undefined when it holds a flag that means more than case-insensitivity.
 */
export function withoutCaseFlags(pattern: string): string | undefined {
  let out = "";
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i]!;
    if (c === "\\") {
      out += pattern.slice(i, i + 2);
      i += 2;
      continue;
    }
    if (c === "[") {
      let j = i + 1;
      if (pattern[j] === "^") j++;
      if (pattern[j] === "]") j++;
      while (j < pattern.length && pattern[j] !== "]") j += pattern[j] === "\\" ? 2 : 1;
      out += pattern.slice(i, j + 1);
      i = j + 1;
      continue;
    }
    const flags = c === "(" ? FLAG_GROUP.exec(pattern.slice(i)) : null;
    if (flags && flags[1] !== "") {
      if (!HARMLESS_FLAGS.test(flags[1]!)) return undefined;
      out += flags[2] === ":" ? "(?:" : "";
      i += flags[0].length;
      continue;
    }
    out += c;
    i++;
  }
  return out;
}

function hexEscape(pattern: string, at: number, letter: "x" | "u"): Escape {
  const braced = /^\{([0-9A-Fa-f]{1,6})\}/.exec(pattern.slice(at + 1));
  const fixed = new RegExp(`^[0-9A-Fa-f]{${letter === "x" ? 2 : 4}}`).exec(pattern.slice(at + 1));
  const hex = braced?.[1] ?? fixed?.[0];
  if (hex === undefined) fail(`\\${letter} needs ${letter === "x" ? "two" : "four"} hex digits or {hex}.`, at - 1);
  const code = parseInt(hex, 16);
  if (code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff))
    fail(`\\${letter}${braced ? `{${hex}}` : hex} is not a Unicode scalar value.`, at - 1);
  const spelled = `\\u{${code.toString(16).toUpperCase()}}`;
  return {
    rust: `\\x{${code.toString(16).toUpperCase()}}`,
    js: spelled,
    length: 1 + (braced ? braced[0].length : hex.length),
    kind: "atom",
  };
}

/** Reads the escape whose backslash is at pattern[at - 1]; `inClass` selects the class spellings. */
function readEscape(pattern: string, at: number, inClass: boolean): Escape {
  const c = pattern[at];
  if (c === undefined) fail("The pattern ends with a lone backslash; write \\\\ for a literal one.", at - 1);
  const lower = c.toLowerCase();
  if (lower in RUST_CLASS_BODY) {
    const body = RUST_CLASS_BODY[lower]!;
    const negated = c !== lower;
    const rust = inClass ? (negated ? `[^${body}]` : body) : negated ? `[^${body}]` : `[${body}]`;
    return { rust, js: `\\${c}`, length: 1, kind: "atom" };
  }
  switch (c) {
    case "b":
    case "B":
      if (inClass) fail("\\b inside [...] means different things to the two engines; remove it.", at - 1);
      return { rust: `(?-u:\\${c})`, js: `\\${c}`, length: 1, kind: "assertion" };
    case "t":
    case "f":
    case "v":
      return { rust: `\\${c}`, js: `\\${c}`, length: 1, kind: "atom" };
    case "n":
    case "r":
      return fail("/g matches within one line, so a pattern cannot contain \\n or \\r.", at - 1);
    case "x":
    case "u":
      return hexEscape(pattern, at, c);
    case "p":
    case "P": {
      const named = /^\{([A-Za-z]+)\}/.exec(pattern.slice(at + 1));
      const name = named ? named[1]! : (pattern[at + 1] ?? "");
      if (!PROPERTIES.has(name))
        fail(`\\${c}{${name}} is not supported; use a general category such as \\p{L}, \\p{Lu} or \\p{N}.`, at - 1);
      return {
        rust: `\\${c}{${name}}`,
        js: `\\${c}{${name}}`,
        length: 1 + (named ? named[0].length : 1),
        kind: "atom",
      };
    }
    default:
      break;
  }
  if (ASCII_PUNCTUATION.test(c)) {
    const jsEscapable = JS_SYNTAX.has(c) || (inClass && c === "-");
    return { rust: RUST_META.has(c) ? `\\${c}` : c, js: jsEscapable ? `\\${c}` : c, length: 1, kind: "atom" };
  }
  if (/[0-9]/.test(c)) fail("Backreferences and octal escapes are not supported.", at - 1);
  return fail(`\\${c} is not supported by both search engines.`, at - 1);
}

/** Translates a class starting at pattern[start] === "[", returning the end index (after "]"). */
function readClass(pattern: string, start: number, out: TranslatedRegex): number {
  let i = start + 1;
  let rust = "[";
  let js = "[";
  if (pattern[i] === "^") {
    rust += "^";
    js += "^";
    i++;
  }
  if (pattern[i] === "]") fail("Write \\] for a literal ] inside [...]; an empty class is not supported.", i);
  while (i < pattern.length && pattern[i] !== "]") {
    const c = pattern[i]!;
    const pair = pattern.slice(i, i + 2);
    if (pair === "&&" || pair === "--" || pair === "~~")
      fail(`"${pair}" inside [...] is a set operation in Rust; escape one character (\\${c}).`, i);
    if (c === "[") fail("Write \\[ for a literal [ inside [...]; nested and POSIX classes are not supported.", i);
    if (c === "\n" || c === "\r") fail("/g matches within one line, so a pattern cannot contain a newline.", i);
    if (c === "\\") {
      const escape = readEscape(pattern, i + 1, true);
      rust += escape.rust;
      js += escape.js;
      i += 1 + escape.length;
      continue;
    }
    const ch = String.fromCodePoint(pattern.codePointAt(i)!);
    rust += RUST_META.has(ch) && ch !== "-" && ch !== "^" ? `\\${ch}` : ch;
    js += ch;
    i += ch.length;
  }
  if (i >= pattern.length) fail("Unclosed [ in the pattern; write \\[ for a literal [.", start);
  out.rust += `${rust}]`;
  out.js += `${js}]`;
  return i + 1;
}

const QUANTIFIER_BRACES = /^\{(\d{1,5})(,(\d{0,5}))?\}/;

/** Translates a pattern, or throws RegexDialectError naming the construct and what to write instead. */
export function translateRegex(pattern: string): TranslatedRegex {
  const out: TranslatedRegex = { rust: "", js: "" };
  let groups = 0;
  let canRepeat = false;
  const leading = leadingFlags(pattern);
  let i = leading?.rest ?? 0;
  const repeat = (text: string, at: number) => {
    if (!canRepeat) fail(`"${text}" has nothing to repeat; escape it (\\${text[0]}) for a literal character.`, at);
    let spelled = text;
    if (pattern[at + text.length] === "?") spelled += "?";
    out.rust += spelled;
    out.js += spelled;
    canRepeat = false;
    return at + spelled.length;
  };
  while (i < pattern.length) {
    const c = pattern[i]!;
    switch (c) {
      case "\\": {
        const escape = readEscape(pattern, i + 1, false);
        out.rust += escape.rust;
        out.js += escape.js;
        canRepeat = escape.kind === "atom";
        i += 1 + escape.length;
        continue;
      }
      case "[":
        i = readClass(pattern, i, out);
        canRepeat = true;
        continue;
      case "(":
        if (pattern[i + 1] === "?") {
          const named = NAMED_GROUP.exec(pattern.slice(i));
          if (named) {
            // A line either matches or not: the name changes nothing, so it is a plain group for both engines.
            out.rust += "(";
            out.js += "(";
            i += named[0].length;
          } else if (pattern[i + 2] === ":") {
            out.rust += "(?:";
            out.js += "(?:";
            i += 3;
          } else {
            const flags = FLAG_GROUP.exec(pattern.slice(i));
            if (flags && NO_OP_FLAGS.test(flags[1]!)) {
              // (?s) (?m) (?u) change nothing within one line: dropped, and (?s:...) is a plain (?:...).
              if (flags[2] === ":") {
                out.rust += "(?:";
                out.js += "(?:";
                groups++;
              }
              canRepeat = false;
              i += flags[0].length;
              continue;
            }
            if (flags) {
              const plain = withoutCaseFlags(pattern);
              const only = plain !== undefined && /i/.test(flags[1]!) ? plain : undefined;
              throw new RegexDialectError(
                only !== undefined
                  ? `Inline flags are supported only at the start of the pattern ((?i)...); ${flags[0]} here cannot be searched the same way by both engines. Fetch the repair URL to search the pattern with ignoreCase=1 instead (case-insensitive throughout).`
                  : `Inline flags other than (?i), (?m), (?s) and (?u) at the start of the pattern are not supported; remove ${flags[0]}${flags[0].endsWith(":") ? "...)" : ""}.`,
                i,
                only,
              );
            }
            fail(
              "(?=, (?!, (?<= and (?<! (lookaround) are not supported, nor other (?...) groups than (?:...), (?<name>...) and leading inline flags.",
              i,
            );
          }
        } else {
          out.rust += "(";
          out.js += "(";
          i += 1;
        }
        groups++;
        canRepeat = false;
        continue;
      case ")":
        if (groups === 0) fail("Unmatched ); write \\) for a literal parenthesis.", i);
        groups--;
        out.rust += ")";
        out.js += ")";
        canRepeat = true;
        i++;
        continue;
      case "|":
      case "^":
      case "$":
        out.rust += c;
        out.js += c;
        canRepeat = false;
        i++;
        continue;
      case "*":
      case "+":
      case "?":
        i = repeat(c, i);
        continue;
      case "{": {
        const m = QUANTIFIER_BRACES.exec(pattern.slice(i));
        if (!m) fail("Write \\{ for a literal {; a repetition is {n}, {n,} or {n,m}.", i);
        const low = Number(m[1]);
        const high = m[3] === undefined || m[3] === "" ? undefined : Number(m[3]);
        if (low > MAX_REPETITION || (high ?? 0) > MAX_REPETITION)
          fail(`Repetition counts above ${MAX_REPETITION} are not supported.`, i);
        if (high !== undefined && high < low) fail(`{${low},${high}}: the larger count must come second.`, i);
        i = repeat(m[0], i);
        continue;
      }
      case "}":
      case "]":
        return fail(`Write \\${c} for a literal ${c}.`, i);
      case "\n":
      case "\r":
        return fail("/g matches within one line, so a pattern cannot contain a newline.", i);
      case ".":
        out.rust += ".";
        out.js += ".";
        canRepeat = true;
        i++;
        continue;
      default: {
        const ch = String.fromCodePoint(pattern.codePointAt(i)!);
        out.rust += RUST_META.has(ch) ? `\\${ch}` : ch;
        out.js += ch;
        canRepeat = true;
        i += ch.length;
      }
    }
  }
  if (groups > 0) fail("Unclosed ( in the pattern; write \\( for a literal parenthesis.", pattern.length);
  return leading?.ignoreCase === undefined ? out : { ...out, ignoreCase: leading.ignoreCase };
}

/** Escapes text for a RegExp with the "u" flag. */
export function escapeForJs(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&");
}
