// How a text leaves the client: the reference encoder, an agent typing the URL by hand (through a WHATWG
// reader or as raw bytes), or a standard percent-encoding library. Each form yields wire bytes.
import { encodeQueryValue, encodeUrlText } from "../../server/url-grammar/encode.js";

export type FormName = "reference" | "agent-whatwg" | "agent-bytes" | "percent-library";

export interface Form {
  name: FormName;
  description: string;
  /** Whether this form can carry `text` at all (a form may have a documented blind spot). */
  carries(text: string): boolean;
  /** Text for a parameter before raw= and for the raw tail, as the client writes it (not yet wire bytes). */
  value(text: string): string;
  tail(text: string): string;
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

// encodeURIComponent leaves ~ alone (so ~n in the text would decode as an escape) and encodes % as %25
// (so %20 in the text would come back as a space, see "Double encoding"): the form's documented blind spots.
const PERCENT_LIBRARY_BLIND_SPOT = /~|%[0-9A-Fa-f]{2}/;

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
    carries: (t) => !PERCENT_LIBRARY_BLIND_SPOT.test(t) && !HAS_LONE_SURROGATE.test(t),
    value: encodeURIComponent,
    tail: encodeURIComponent,
    toWire: (_origin, target) => target,
  },
];

export function form(name: FormName): Form {
  return FORMS.find((f) => f.name === name)!;
}
