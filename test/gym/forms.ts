// How a text leaves the client: the reference encoder, an agent typing the URL by hand (through a WHATWG
// reader or as raw bytes), or a standard percent-encoding library. Each form yields wire bytes.
import { encodeQueryValue, encodeUrlText } from "../../server/url-grammar/encode.js";
import { tildeEscapesIn } from "../../server/url-grammar/tilde.js";

export type FormName =
  | "reference"
  | "agent-whatwg"
  | "agent-bytes"
  | "percent-library"
  | "python-quote"
  | "form-urlencoded"
  | "percent-declared";

export interface Form {
  name: FormName;
  description: string;
  /** Whether this form can carry `text` at all (a form may have a documented blind spot). */
  carries(text: string): boolean;
  /** Text for a parameter before raw= and for the raw tail, as the client writes it (not yet wire bytes). */
  value(text: string): string;
  tail(text: string): string;
  /** Parameters the form puts first in every query it writes (a declaration: enc=pct). */
  params?: string[];
  /** Turns the URL the client wrote into the request target bytes it sends (a latin1 byte string). */
  toWire(origin: string, target: string): string;
}

const LONE_SURROGATE_SOURCE = "[\\ud800-\\udbff](?![\\udc00-\\udfff])|(?<![\\ud800-\\udbff])[\\udc00-\\udfff]";
const LONE_SURROGATE = new RegExp(LONE_SURROGATE_SOURCE, "g");
const HAS_LONE_SURROGATE = new RegExp(LONE_SURROGATE_SOURCE);
// What an agent cannot type into a URL and so writes as ~uXXXX: controls other than the ~n ~r ~t ones.
const UNTYPEABLE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/g;
const PARAMETER_LOOKALIKE = /&(?=[A-Za-z][A-Za-z0-9_]*=)/g;

const unit = (ch: string) => `~u${ch.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`;

/**
 * What the protocol asks of an agent writing by hand: ~ ~n ~r ~t ~h ~p ~q for ~ newline CR tab # % +,
 * ~a for an & that would split a value or look like a parameter, ~uXXXX for controls; everything else
 * (spaces, quotes, non-ASCII) typed as is.
 */
function agentEscape(text: string, space: string, ampersand: RegExp): string {
  return text
    .replace(LONE_SURROGATE, "\ufffd")
    .replace(/~/g, "~~")
    .replace(/\n/g, "~n")
    .replace(/\r/g, "~r")
    .replace(/\t/g, "~t")
    .replace(/#/g, "~h")
    .replace(/%/g, "~p")
    .replace(/\+/g, "~q")
    .replace(ampersand, "~a")
    .replace(UNTYPEABLE, unit)
    .replace(/ /g, space);
}

const explicitTrailingSpaces = (typed: string) => typed.replace(/ +$/, (spaces) => "~s".repeat(spaces.length));

const utf8Bytes = (target: string) => Buffer.from(target, "utf8").toString("latin1");

/** The path and query a WHATWG reader (fetch, Chromium) actually requests for a typed URL. */
function whatwgTarget(origin: string, target: string): string {
  const url = new URL(`${origin}${target}`);
  return `${url.pathname}${url.search}`;
}

// What a standard encoder cannot carry through the ~ grammar (docs/TRANSPORT_GYM.md, "Client forms"):
// a ~ escape in a text with no newline, CR, tab, #, % or & (encoded, those prove the agent encoded the text,
// so its ~ are literal; without them, or beside a ~u or a spaceless ~s, the ~ grammar is read, with a
// notice), and a literal %XX in a text that gives no
// evidence of having been decoded. The server removes a further percent layer only while what one layer
// left could itself be an encoder's output: no raw space, quote, < or >, control or non-ASCII character,
// and no escaped letter, digit, - . or _. A text with any of those keeps its %XX as written.
const EVIDENCE_OF_TEXT = /[\u0000-\u0020"<>\u007f-\uffff]|%(?:[46][1-9A-Fa-f]|[57][0-9Aa]|3[0-9]|2[DEde]|5[Ff])/;
const EVIDENCE_OF_TEXT_NO_SPACE =
  /[\u0000-\u001f"<>\u007f-\uffff]|%(?:[46][1-9A-Fa-f]|[57][0-9Aa]|3[0-9]|2[DEde]|5[Ff])/;
const PERCENT_ESCAPE = /%[0-9A-Fa-f]{2}/;
/** Whether a standard encoder's one layer of `text` reaches the server's text intact. */
export const encoderCarries = (text: string, spaceIsEvidence: boolean) =>
  tildeIsEvidentlyText(text) && declaredCarries(text, spaceIsEvidence);
const ENCODED_BY_AGENT = /[\n\r\t#%&]/;
/** Whether the server reads an encoder's ~ as text: an escaped newline, CR, tab, #, % or &, and no ~u, and no ~s, ~q, ~h in a text without a space, + or #. */
function tildeIsEvidentlyText(text: string): boolean {
  const escapes = tildeEscapesIn(text);
  if (escapes.size === 0) return true;
  const spelledByGrammar = (e: string, ch: string) => escapes.has(e) && !text.includes(ch);
  return (
    ENCODED_BY_AGENT.test(text) &&
    !escapes.has("u") &&
    !spelledByGrammar("s", " ") &&
    !spelledByGrammar("q", "+") &&
    !spelledByGrammar("h", "#")
  );
}
/** What an encoder carries when the URL declares enc=pct: any ~, the same literal %XX. */
export const declaredCarries = (text: string, spaceIsEvidence: boolean) =>
  !HAS_LONE_SURROGATE.test(text) &&
  (!PERCENT_ESCAPE.test(text) || (spaceIsEvidence ? EVIDENCE_OF_TEXT : EVIDENCE_OF_TEXT_NO_SPACE).test(text));

const hexByte = (b: number) => `%${b.toString(16).toUpperCase().padStart(2, "0")}`;
/** Percent-encodes the UTF-8 of every character outside `keep`; `space` replaces a space when given. */
function percentEncode(text: string, keep: RegExp, space?: string): string {
  let out = "";
  for (const ch of text) {
    if (space !== undefined && ch === " ") out += space;
    else if (keep.test(ch)) out += ch;
    else for (const b of Buffer.from(ch, "utf8")) out += hexByte(b);
  }
  return out;
}
// urllib.parse.quote(text) with its default safe="/": letters, digits, _ . - ~ and / stay.
const pythonQuote = (text: string) => percentEncode(text, /^[A-Za-z0-9_.\-~/]$/);
// application/x-www-form-urlencoded (URLSearchParams, urllib.parse.quote_plus, HTML forms): letters,
// digits, * - . _ stay, a space is +, everything else (+ and ~ included) is %XX.
const formUrlencoded = (text: string) => percentEncode(text, /^[A-Za-z0-9*\-._]$/, "+");

export const FORMS: readonly Form[] = [
  {
    name: "reference",
    description: "encodeUrlText / encodeQueryValue from server/url-grammar/encode.ts",
    carries: () => true,
    value: encodeQueryValue,
    tail: encodeUrlText,
    toWire: (_origin, target) => target,
  },
  {
    name: "agent-whatwg",
    description: "typed by hand (spaces, quotes, non-ASCII as is), sent by a WHATWG reader such as fetch or Chromium",
    carries: () => true,
    // WHATWG URL parsing strips spaces at the end of a URL, and a value may be the end: those need ~s.
    value: (t) => explicitTrailingSpaces(agentEscape(t, " ", /&/g)),
    tail: (t) => explicitTrailingSpaces(agentEscape(t, " ", PARAMETER_LOOKALIKE)),
    toWire: whatwgTarget,
  },
  {
    name: "agent-bytes",
    description: "typed by hand with + for spaces, sent as raw UTF-8 bytes the way curl does",
    carries: () => true,
    value: (t) => agentEscape(t, "+", /&/g),
    tail: (t) => agentEscape(t, "+", PARAMETER_LOOKALIKE),
    toWire: (_origin, target) => utf8Bytes(target),
  },
  {
    name: "percent-library",
    description: "encodeURIComponent, what a generic HTTP library does when it is not told about the ~ grammar",
    carries: (t) => encoderCarries(t, true),
    value: encodeURIComponent,
    tail: encodeURIComponent,
    toWire: (_origin, target) => target,
  },
  {
    name: "python-quote",
    description: "urllib.parse.quote with its default safe='/', what a Python agent's HTTP code does",
    carries: (t) => encoderCarries(t, true),
    value: pythonQuote,
    tail: pythonQuote,
    toWire: (_origin, target) => target,
  },
  {
    name: "percent-declared",
    description: "encodeURIComponent with enc=pct: the agent declares its text percent-encoded, so every ~ is literal",
    carries: (t) => declaredCarries(t, true),
    value: encodeURIComponent,
    tail: encodeURIComponent,
    // First in the query, where no proxy of the matrix moves it after raw=.
    params: ["enc=pct"],
    toWire: (_origin, target) => target,
  },
  {
    name: "form-urlencoded",
    description: "URLSearchParams / quote_plus / an HTML form: + for spaces, %2B for +, ~ as %7E",
    carries: (t) => encoderCarries(t, false),
    value: formUrlencoded,
    tail: formUrlencoded,
    toWire: (_origin, target) => target,
  },
];

export function form(name: FormName): Form {
  return FORMS.find((f) => f.name === name)!;
}
