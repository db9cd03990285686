// What a response body is: HTML, other text, or binary (refused). The Content-Type decides when it is clear;
// otherwise (none, application/octet-stream, an unknown application/*) the bytes do, by the NUL rule the text
// codec uses for files (server/text/detect.ts).
import { ErrorCode, ToolError } from "../../../errors.js";

export type ContentKind = "html" | "text";

export interface MediaType {
  /** Lower-case type/subtype, or "" when the header is missing. */
  essence: string;
  charset: string | undefined;
}

export function parseContentType(header: string | undefined): MediaType {
  if (!header) return { essence: "", charset: undefined };
  const [essence = "", ...params] = header.split(";");
  let charset: string | undefined;
  for (const param of params) {
    const eq = param.indexOf("=");
    if (eq === -1 || param.slice(0, eq).trim().toLowerCase() !== "charset") continue;
    charset =
      param
        .slice(eq + 1)
        .trim()
        .replace(/^"(.*)"$/, "$1")
        .toLowerCase() || undefined;
  }
  return { essence: essence.trim().toLowerCase(), charset };
}

const HTML_TYPES = new Set(["text/html", "application/xhtml+xml"]);
const TEXT_APPLICATION =
  /^application\/(json|xml|javascript|ecmascript|x-javascript|x-sh|x-shellscript|toml|yaml|x-yaml|x-ndjson|ndjson|graphql|sql|x-tex|x-latex|rtf|x-httpd-php|typescript|x-typescript|markdown|x-markdown|csv|x-www-form-urlencoded|manifest\+json|ld\+json|[\w.+-]+\+(json|xml))$/;
const BINARY_TOP = /^(image|audio|video|font|model)\//;
const SNIFF_BYTES = 8192;

function looksLikeHtml(body: Buffer): boolean {
  const head = body.subarray(0, 1024).toString("latin1").trimStart().toLowerCase();
  return head.startsWith("<!doctype html") || head.startsWith("<html") || /^<(head|body|title|meta)[\s>]/.test(head);
}

/** A NUL in the first 8 KiB means binary, unless the charset is UTF-16/32 (whose text holds NUL bytes). */
function hasNul(body: Buffer, charset: string | undefined): boolean {
  if (charset && /^utf-?(16|32)/.test(charset)) return false;
  if (body.length >= 2 && ((body[0] === 0xff && body[1] === 0xfe) || (body[0] === 0xfe && body[1] === 0xff)))
    return false;
  return body.subarray(0, SNIFF_BYTES).includes(0);
}

/** html or text, or web_binary_content naming the type. */
export function contentKindOf(type: MediaType, body: Buffer, host: string): ContentKind {
  const binary = () =>
    new ToolError(
      ErrorCode.webBinaryContent,
      `${host} answered ${type.essence || "a body without Content-Type"} that is not text; webfetch returns text, markdown or HTML only.`,
      {
        detail: { contentType: type.essence || null, bytes: body.length },
      },
    );
  if (HTML_TYPES.has(type.essence)) {
    if (hasNul(body, type.charset)) throw binary();
    return "html";
  }
  if (type.essence.startsWith("text/") || TEXT_APPLICATION.test(type.essence)) {
    if (hasNul(body, type.charset)) throw binary();
    return "text";
  }
  if (
    BINARY_TOP.test(type.essence) ||
    (type.essence !== "" && type.essence !== "application/octet-stream" && !type.essence.startsWith("application/"))
  )
    throw binary();
  if (
    /^application\/(pdf|zip|gzip|x-tar|x-7z-compressed|wasm|vnd\.|msword|x-executable|x-mach|java-archive)/.test(
      type.essence,
    )
  )
    throw binary();
  // No type, octet-stream or an unknown application/*: the bytes decide.
  if (hasNul(body, type.charset)) throw binary();
  return looksLikeHtml(body) ? "html" : "text";
}
