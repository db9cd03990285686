// The web family over MCP with OpenCode's names and fields: webfetch (url, format?, timeout? in seconds; plus
// offset to page) and websearch (query; plus limit), each the kernel tool of the same name, same answers.
import { z } from "zod";
import { DEFAULT_WEB_SEARCH_RESULTS, DEFAULT_WEB_TIMEOUT_S, MAX_WEB_SEARCH_RESULTS, MAX_WEB_TIMEOUT_S, MAX_WEB_URL_CHARS, MAX_WEB_QUERY_CHARS } from "../../kernel/web/limits.js";
import { WEB_FORMATS, type WebfetchOutput } from "../../kernel/web/webfetch.js";
import type { WebsearchOutput } from "../../kernel/web/websearch.js";
import { answerOf, type McpToolSpec } from "./spec.js";

// Reads the open web: not idempotent (pages change) and open-world, but never changes anything.
const WEB = { readOnlyHint: true, destructiveHint: false, idempotentHint: false, openWorldHint: true } as const;

const webfetchInput = z.strictObject({
  url: z.string().min(1).max(MAX_WEB_URL_CHARS).describe("The http(s) URL to fetch."),
  format: z.enum(WEB_FORMATS).optional().describe("markdown (default), text, or html (the page as sent)."),
  timeout: z.number().int().min(1).max(MAX_WEB_TIMEOUT_S).optional().describe(`Seconds for the whole fetch, redirects included (default ${DEFAULT_WEB_TIMEOUT_S}, at most ${MAX_WEB_TIMEOUT_S}).`),
  offset: z.number().int().min(0).optional().describe("UTF-8 byte offset to continue a long document from: the `end` of the previous page."),
});

function webfetchText(page: WebfetchOutput): string {
  const head = `${page.finalUrl} (${page.contentType || "no content type"}, ${page.charset}, ${page.format}${page.title ? `, "${page.title}"` : ""}) bytes ${page.offset}-${page.end} of ${page.total}`;
  const notes: string[] = [];
  if (page.notice) notes.push(page.notice);
  if (!page.complete) notes.push(`More follows: call webfetch with the same url and format and offset: ${page.end}.`);
  return [head, "", page.content, ...(notes.length ? ["", ...notes] : [])].join("\n");
}

const webfetch: McpToolSpec = {
  name: "webfetch",
  kernel: "webfetch",
  title: "Fetch a web page",
  description:
    "Fetch one public http(s) URL as markdown (default), text or HTML, in pages of about 24 KiB (the answer names the offset that continues). Binary content and private addresses are refused.",
  input: webfetchInput,
  contentFields: [],
  annotations: WEB,
  async call(args, call) {
    const { url, format, timeout, offset } = args as z.infer<typeof webfetchInput>;
    const outcome = await call.run("webfetch", {
      url,
      ...(format !== undefined ? { format } : {}),
      ...(timeout !== undefined ? { timeout } : {}),
      ...(offset !== undefined ? { offset } : {}),
    });
    return answerOf(outcome, (body) => webfetchText(body as unknown as WebfetchOutput));
  },
};

const websearchInput = z.strictObject({
  query: z.string().min(1).max(MAX_WEB_QUERY_CHARS).describe("What to search the web for."),
  limit: z.number().int().min(1).max(MAX_WEB_SEARCH_RESULTS).optional().describe(`Most results (default ${DEFAULT_WEB_SEARCH_RESULTS}, at most ${MAX_WEB_SEARCH_RESULTS}).`),
});

const websearch: McpToolSpec = {
  name: "websearch",
  kernel: "websearch",
  title: "Search the web",
  description: "Search the web; answers title, URL and snippet per result, best first. Read a result with webfetch.",
  input: websearchInput,
  contentFields: ["query"],
  annotations: WEB,
  async call(args, call) {
    const { query, limit } = args as z.infer<typeof websearchInput>;
    const outcome = await call.run("websearch", { query, ...(limit !== undefined ? { limit } : {}) });
    return answerOf(outcome, (body) => {
      const found = body as unknown as WebsearchOutput;
      if (found.results.length === 0) return `No results for ${query} (${found.provider}).`;
      return found.results.map((r, i) => `${i + 1}. ${r.title}\n   ${r.url}\n   ${r.snippet}`).join("\n");
    });
  },
};

export const webTools: readonly McpToolSpec[] = [webfetch, websearch];
