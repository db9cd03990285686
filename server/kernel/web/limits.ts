// Every ceiling of the web tools in one place, so docs/PROTOCOL.md and the code cannot drift apart.

/** Bytes of one response body webfetch reads (after decompression); a longer body is cut there and says so. */
export const MAX_WEB_DOWNLOAD_BYTES = 5 * 1024 * 1024;
/** Compressed bytes read off the wire for one response, so a small zip bomb cannot cost more than this. */
export const MAX_WEB_WIRE_BYTES = 8 * 1024 * 1024;
/** UTF-8 bytes of converted content one webfetch page returns; `next` continues (/r pages the same way, 64 KiB by default). */
export const WEB_PAGE_BYTES = 24 * 1024;
/** webfetch timeout in seconds: default and ceiling (the whole call, every redirect included). */
export const DEFAULT_WEB_TIMEOUT_S = 30;
export const MAX_WEB_TIMEOUT_S = 60;
/** Converting one HTML document to markdown or text (on the conversion worker for large pages). */
export const MAX_WEB_CONVERT_MS = 30_000;
/** Redirects followed, each hop checked by the guard again. */
export const MAX_WEB_REDIRECTS = 5;
/** Longest URL webfetch accepts. */
export const MAX_WEB_URL_CHARS = 4096;
/** Converted documents kept per session for paging (next), their total size, and how long one stays. */
export const MAX_WEB_CACHED_DOCUMENTS = 8;
export const MAX_WEB_CACHE_BYTES = 4 * 1024 * 1024;
export const WEB_CACHE_TTL_MS = 10 * 60 * 1000;
/** websearch: results per call (default and ceiling), query length, snippet length, provider timeout. */
export const DEFAULT_WEB_SEARCH_RESULTS = 8;
export const MAX_WEB_SEARCH_RESULTS = 20;
export const MAX_WEB_QUERY_CHARS = 400;
export const MAX_WEB_SNIPPET_CHARS = 400;
export const MAX_WEB_TITLE_CHARS = 200;
export const WEB_SEARCH_TIMEOUT_MS = 20_000;
/** Bytes of a search provider's answer the bridge reads. */
export const MAX_WEB_SEARCH_RESPONSE_BYTES = 2 * 1024 * 1024;
