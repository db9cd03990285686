// What every search provider adapter offers, which one answers (the first configured key, or the one named),
// and the bounded JSON exchange with it. The provider's endpoint is the operator's configuration, so it is not
// put through webfetch's guard (tests point it at a stand-in on loopback).
import { ErrorCode, ToolError } from "../../../errors.js";
import { convertLibraries } from "../convert/html.js";
import {
  MAX_WEB_SEARCH_RESPONSE_BYTES,
  MAX_WEB_SNIPPET_CHARS,
  MAX_WEB_TITLE_CHARS,
  WEB_SEARCH_TIMEOUT_MS,
} from "../limits.js";

export type SearchProviderName = "brave" | "tavily";

export interface SearchResult {
  title: string;
  url: string;
  snippet: string;
}

export interface SearchProvider {
  name: SearchProviderName;
  search(query: string, count: number, signal: AbortSignal): Promise<SearchResult[]>;
}

export interface ProviderEndpoint {
  key: string;
  url: string;
}

/** config.ts's web.search: each provider's key and endpoint, and which to prefer when both have keys. */
export interface WebSearchConfig {
  brave: ProviderEndpoint | undefined;
  tavily: ProviderEndpoint | undefined;
  prefer: SearchProviderName | undefined;
}

/** Environment variables an operator sets, named in web_search_not_configured. */
export const SEARCH_KEY_VARIABLES: Record<SearchProviderName, string> = {
  brave: "URLBRIDGE_BRAVE_API_KEY",
  tavily: "URLBRIDGE_TAVILY_API_KEY",
};

export function notConfigured(prefer?: SearchProviderName): ToolError {
  const wanted = prefer
    ? SEARCH_KEY_VARIABLES[prefer]
    : `${SEARCH_KEY_VARIABLES.brave} or ${SEARCH_KEY_VARIABLES.tavily}`;
  return new ToolError(
    ErrorCode.webSearchNotConfigured,
    `websearch has no search provider: the operator sets ${wanted} (and restarts the bridge). Nothing was sent. webfetch still works for URLs you know.`,
    {
      detail: { variables: prefer ? [SEARCH_KEY_VARIABLES[prefer]] : Object.values(SEARCH_KEY_VARIABLES) },
      agentAction: "stop",
    },
  );
}

/** Plain text of a provider's snippet (Brave marks matches with <strong>), one line, bounded. */
export function plainSnippet(text: unknown, max = MAX_WEB_SNIPPET_CHARS): string {
  if (typeof text !== "string") return "";
  const plain = convertLibraries()
    .convert(text, { wordwrap: false, selectors: [{ selector: "a", options: { ignoreHref: true } }] })
    .replace(/\s+/g, " ")
    .trim();
  return plain.length > max ? `${plain.slice(0, max)}…` : plain;
}

export const plainTitle = (text: unknown) => plainSnippet(text, MAX_WEB_TITLE_CHARS);

/** Only http(s) result URLs are passed on. */
export function resultUrl(value: unknown): string | undefined {
  if (typeof value !== "string") return undefined;
  try {
    const url = new URL(value);
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : undefined;
  } catch {
    return undefined;
  }
}

const REFUSED = new Set([400, 401, 403, 422]);

/** One JSON request to a provider: bounded time and size; failures as web_search_failed naming the provider. */
export async function providerJson(
  provider: SearchProviderName,
  request: Request,
  signal: AbortSignal,
): Promise<unknown> {
  const deadline = AbortSignal.timeout(WEB_SEARCH_TIMEOUT_MS);
  let response: Response;
  try {
    response = await fetch(request, { signal: AbortSignal.any([signal, deadline]) });
  } catch (error) {
    const code = deadline.aborted ? "timeout" : ((error as { cause?: { code?: string } }).cause?.code ?? "network");
    throw new ToolError(
      ErrorCode.webSearchFailed,
      `The ${provider} search API could not be reached (${code}). Try again later.`,
      { detail: { provider, code } },
    );
  }
  if (!response.ok) {
    await response.body?.cancel();
    const refused = REFUSED.has(response.status);
    throw new ToolError(
      ErrorCode.webSearchFailed,
      refused
        ? `The ${provider} search API refused the request (HTTP ${response.status}); the operator checks ${SEARCH_KEY_VARIABLES[provider]}.`
        : `The ${provider} search API answered HTTP ${response.status}. Try again later.`,
      {
        detail: { provider, status: response.status },
        retryable: !refused,
        ...(refused ? { agentAction: "stop" as const } : {}),
      },
    );
  }
  const text = await boundedText(response, provider);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ToolError(
      ErrorCode.webSearchFailed,
      `The ${provider} search API answered something that is not JSON. Try again later.`,
      { detail: { provider, code: "bad_json" } },
    );
  }
}

async function boundedText(response: Response, provider: SearchProviderName): Promise<string> {
  // Node's fetch body yields bytes; its types leave the chunk type open.
  const reader = (response.body as ReadableStream<Uint8Array> | null)?.getReader();
  if (!reader) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > MAX_WEB_SEARCH_RESPONSE_BYTES) {
      await reader.cancel();
      throw new ToolError(
        ErrorCode.webSearchFailed,
        `The ${provider} search API answered more than ${MAX_WEB_SEARCH_RESPONSE_BYTES} bytes. Try a narrower query.`,
        { detail: { provider, code: "too_large" } },
      );
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}
