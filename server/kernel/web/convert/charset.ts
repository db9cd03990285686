// Which character encoding a body is in, and its text: a byte order mark first, then the Content-Type charset,
// then (HTML) a <meta> charset in the first 1024 bytes as the HTML prescan reads it, else UTF-8. Labels are
// resolved the WHATWG way (TextDecoder: "latin1" and "iso-8859-1" mean windows-1252); the bytes are decoded by
// iconv-lite where it knows the encoding, because Node 20's TextDecoder decodes windows-1252 as ISO-8859-1
// (0x80-0x9F become C1 controls, so curly quotes and dashes are lost), else by TextDecoder.
import { createRequire } from "node:module";
import type iconvLite from "iconv-lite";

export interface DecodedText {
  text: string;
  /** The WHATWG name of the encoding used (utf-8, windows-1252...). */
  charset: string;
  /** How the charset was chosen. */
  source: "bom" | "header" | "meta" | "default";
  /** Set when a declared label was not a known encoding and UTF-8 was used instead. */
  unknownLabel?: string;
}

const META_PRESCAN_BYTES = 1024;

function bomCharset(body: Buffer): string | undefined {
  if (body.length >= 3 && body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) return "utf-8";
  if (body.length >= 2 && body[0] === 0xff && body[1] === 0xfe) return "utf-16le";
  if (body.length >= 2 && body[0] === 0xfe && body[1] === 0xff) return "utf-16be";
  return undefined;
}

/** <meta charset="x"> or <meta http-equiv="content-type" content="...; charset=x"> near the top. */
export function metaCharset(body: Buffer): string | undefined {
  const head = body.subarray(0, META_PRESCAN_BYTES).toString("latin1");
  for (const tag of head.match(/<meta\b[^>]*>/gi) ?? []) {
    const direct = /\bcharset\s*=\s*["']?\s*([\w.:-]+)/i.exec(tag);
    if (direct) return direct[1]!.toLowerCase();
  }
  return undefined;
}

function decoderFor(label: string): InstanceType<typeof TextDecoder> | undefined {
  try {
    return new TextDecoder(label);
  } catch {
    return undefined;
  }
}

const require = createRequire(import.meta.url);
let iconvModule: typeof iconvLite | undefined;
/** iconv-lite's tables load on the first body decoded, not at start-up. */
const iconv = (): typeof iconvLite => (iconvModule ??= require("iconv-lite") as typeof iconvLite);

export function decodeBody(body: Buffer, headerCharset: string | undefined, html: boolean): DecodedText {
  const bom = bomCharset(body);
  const [label, source] = bom
    ? [bom, "bom" as const]
    : headerCharset
      ? [headerCharset, "header" as const]
      : html && metaCharset(body)
        ? [metaCharset(body)!, "meta" as const]
        : ["utf-8", "default" as const];
  let decoder = decoderFor(label);
  // HTML's prescan rule: a document that declares UTF-16 in a <meta> is in fact ASCII-compatible, so UTF-8.
  if (source === "meta" && decoder && decoder.encoding.startsWith("utf-16")) decoder = new TextDecoder("utf-8");
  if (!decoder) {
    const fallback = new TextDecoder("utf-8");
    return { text: fallback.decode(body), charset: fallback.encoding, source: "default", unknownLabel: label };
  }
  // Both drop a BOM themselves (TextDecoder's ignoreBOM false, iconv-lite's stripBOM).
  const text = iconv().encodingExists(decoder.encoding) ? iconv().decode(body, decoder.encoding) : decoder.decode(body);
  return { text, charset: decoder.encoding, source };
}
