// The hostile intermediaries of the gym's matrix as pure rewrites of a query string. The string is a
// byte string (one char per byte, latin1), exactly what travels on the wire after the first "?".

export type Contract = "exact" | "exact-or-refused";

export interface QueryRewrite {
  name: string;
  description: string;
  /** exact: the server must decode the bytes that were meant. exact-or-refused: or refuse with a structured error. */
  contract: Contract;
  rewrite(query: string): string;
}

const ESCAPE = /%[0-9A-Fa-f]{2}/y;
const byteHex = (b: number) => `%${b.toString(16).toUpperCase().padStart(2, "0")}`;

/** Rewrites every byte for which `keep` is false as %XX, leaving existing %XX escapes untouched. */
function encodeBytes(query: string, keep: (ch: string) => boolean, reencodePercent: boolean): string {
  let out = "";
  for (let i = 0; i < query.length; i++) {
    const ch = query[i]!;
    ESCAPE.lastIndex = i;
    if (!reencodePercent && ch === "%" && ESCAPE.test(query)) {
      out += query.slice(i, i + 3);
      i += 2;
      continue;
    }
    out += keep(ch) ? ch : byteHex(ch.charCodeAt(0));
  }
  return out;
}

/** Replaces each %XX escape for which `decode` holds by the byte it stands for. */
function decodeEscapes(query: string, decode: (byte: number, index: number, bytes: number[]) => boolean): string {
  return query.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => {
    const bytes = run.match(/%[0-9A-Fa-f]{2}/g)!.map((e) => parseInt(e.slice(1), 16));
    return bytes.map((b, i) => (decode(b, i, bytes) ? String.fromCharCode(b) : byteHex(b))).join("");
  });
}

/** Marks which bytes of a run of escapes form complete, valid multi-byte UTF-8 sequences. */
function utf8Members(bytes: number[]): boolean[] {
  const member = bytes.map(() => false);
  for (let i = 0; i < bytes.length;) {
    const lead = bytes[i]!;
    const len =
      lead >= 0xc2 && lead <= 0xdf ? 2 : lead >= 0xe0 && lead <= 0xef ? 3 : lead >= 0xf0 && lead <= 0xf4 ? 4 : 0;
    if (len > 0 && i + len <= bytes.length) {
      try {
        new TextDecoder("utf-8", { fatal: true }).decode(Uint8Array.from(bytes.slice(i, i + len)));
        for (let k = i; k < i + len; k++) member[k] = true;
        i += len;
        continue;
      } catch {
        // not a sequence: leave the lead byte encoded
      }
    }
    i += 1;
  }
  return member;
}

const UNRESERVED = /^[A-Za-z0-9\-._~]$/;
const ALNUM_MARKS = /^[A-Za-z0-9\-._]$/;
// encodeURI leaves these alone; a reader that runs it over an already encoded URL double-encodes every %.
const ENCODE_URI_KEEPS = /^[A-Za-z0-9;,/?:@&=+$\-_.!~*'()#]$/;
// Bytes a decoding reader must keep encoded or the query would change shape on the wire.
const STRUCTURAL = new Set([..." #%&+=?"].map((c) => c.charCodeAt(0)));

function splitBeforeRaw(query: string): { params: string[]; tail: string | undefined } {
  const parts = query.split("&");
  const at = parts.findIndex((p) => p === "raw" || p.startsWith("raw="));
  if (at === -1) return { params: parts, tail: undefined };
  return { params: parts.slice(0, at), tail: parts.slice(at).join("&") };
}

export const QUERY_REWRITES: readonly QueryRewrite[] = [
  { name: "identity", description: "forwards the target untouched", contract: "exact", rewrite: (q) => q },
  {
    name: "plus-spaces",
    description: "rewrites every space (raw or %20) as +",
    contract: "exact",
    rewrite: (q) => q.replace(/ |%20/g, "+"),
  },
  {
    name: "hex-lower",
    description: "lower-cases the hex digits of every %XX",
    contract: "exact",
    rewrite: (q) => q.replace(/%[0-9A-Fa-f]{2}/g, (e) => e.toLowerCase()),
  },
  {
    name: "hex-upper",
    description: "upper-cases the hex digits of every %XX",
    contract: "exact",
    rewrite: (q) => q.replace(/%[0-9A-Fa-f]{2}/g, (e) => e.toUpperCase()),
  },
  {
    name: "normalize-unreserved",
    description: "RFC 3986 normalisation: decodes escaped unreserved characters, upper-cases the rest",
    contract: "exact",
    rewrite: (q) =>
      decodeEscapes(q, (b) => UNRESERVED.test(String.fromCharCode(b))).replace(/%[0-9a-f]{2}/gi, (e) =>
        e.toUpperCase(),
      ),
  },
  {
    name: "encode-all",
    description:
      "percent-encodes every byte but letters, digits, - . _ and the & = that shape the query (so ~ and + too)",
    contract: "exact",
    rewrite: (q) => encodeBytes(q, (ch) => ALNUM_MARKS.test(ch) || ch === "&" || ch === "=", false),
  },
  {
    name: "double-encode",
    description: "runs encodeURI over the already encoded target: every % becomes %25",
    contract: "exact",
    rewrite: (q) => encodeBytes(q, (ch) => ENCODE_URI_KEEPS.test(ch), true),
  },
  {
    name: "double-encode-all",
    description: "encode-all, then every % encoded again",
    contract: "exact",
    rewrite: (q) =>
      encodeBytes(
        encodeBytes(q, (ch) => ALNUM_MARKS.test(ch) || ch === "&" || ch === "=", false),
        (ch) => ch !== "%",
        true,
      ),
  },
  {
    name: "encode-nothing",
    description:
      "decodes every escape it can to raw bytes (UTF-8 as raw non-ASCII), keeping only space # % & + = ? encoded",
    contract: "exact",
    rewrite: (q) =>
      decodeEscapes(q, (b, i, bytes) =>
        b >= 0x80 ? utf8Members(bytes)[i]! : b > 0x20 && b < 0x7f && !STRUCTURAL.has(b),
      ),
  },
  {
    name: "reorder-before-raw",
    description: "reverses the order of the parameters before raw=, keeping raw= last",
    contract: "exact",
    rewrite: (q) => {
      const { params, tail } = splitBeforeRaw(q);
      return [...params.reverse(), ...(tail === undefined ? [] : [tail])].join("&");
    },
  },
  {
    name: "sort-all",
    description: "splits the whole query on & and sorts it by key, moving parameters after raw=",
    contract: "exact-or-refused",
    rewrite: (q) =>
      q
        .split("&")
        .map((p, i) => ({ p, i, key: p.split("=")[0]! }))
        .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.i - b.i))
        .map((x) => x.p)
        .join("&"),
  },
];

export function queryRewrite(name: string): QueryRewrite {
  const found = QUERY_REWRITES.find((r) => r.name === name);
  if (!found) throw new Error(`no query rewrite named ${name}`);
  return found;
}

/** Applies a rewrite to the query part of a byte-string request target. */
export function rewriteTarget(target: string, rewrite: QueryRewrite): string {
  const q = target.indexOf("?");
  return q === -1 ? target : `${target.slice(0, q + 1)}${rewrite.rewrite(target.slice(q + 1))}`;
}
