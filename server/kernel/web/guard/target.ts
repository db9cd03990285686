// What webfetch accepts as a URL: http or https, parsed by the WHATWG URL parser (which already turns 0x7f.1,
// 2130706433, 0177.0.0.1 and 127.1 into 127.0.0.1 and compresses IPv6), without credentials or a fragment.
import { ErrorCode, ToolError } from "../../../errors.js";
import { MAX_WEB_URL_CHARS } from "../limits.js";

export function invalidUrl(reason: string, hint: string, url?: string): ToolError {
  return new ToolError(ErrorCode.webUrlInvalid, hint, {
    detail: { reason, ...(url !== undefined ? { url: url.slice(0, 200) } : {}) },
  });
}

/** The URL to fetch, or web_url_invalid saying what to change. */
export function parseWebUrl(text: string): URL {
  const trimmed = text.trim();
  if (trimmed.length === 0) throw invalidUrl("empty", "Give the URL to fetch, e.g. https://example.com/docs.");
  if (trimmed.length > MAX_WEB_URL_CHARS)
    throw invalidUrl("too_long", `The URL is longer than ${MAX_WEB_URL_CHARS} characters; shorten it.`);
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    const guess = /^[\w.-]+\.[a-z]{2,}(\/|$)/i.test(trimmed) ? ` Did you mean https://${trimmed}?` : "";
    throw invalidUrl(
      "unparseable",
      `"${trimmed.slice(0, 200)}" is not an absolute URL.${guess} Give it with http:// or https://.`,
      trimmed,
    );
  }
  return checkWebUrl(url);
}

/** The checks a redirect's Location gets as well. */
export function checkWebUrl(url: URL): URL {
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw invalidUrl(
      "scheme",
      `webfetch fetches http and https URLs only, not ${url.protocol.replace(/:$/, "")}:.`,
      url.href,
    );
  }
  if (url.username !== "" || url.password !== "") {
    throw invalidUrl(
      "credentials",
      "The URL carries a user name or password; webfetch sends no credentials. Remove them (user:pass@).",
      `${url.protocol}//${url.host}${url.pathname}`,
    );
  }
  url.hash = "";
  return url;
}

/** The host as the guard sees it: an IPv6 literal without its brackets. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, "$1");
}
