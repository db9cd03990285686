// The web family over MCP with OpenCode's names and fields: webfetch (url, format?, timeout? in seconds; plus
// offset to page) and websearch (query; plus limit), each the kernel tool of the same name, same answers.
import { z } from "zod";
import {
  DEFAULT_WEB_SEARCH_RESULTS,
  DEFAULT_WEB_TIMEOUT_S,
  MAX_WEB_SEARCH_RESULTS,
  MAX_WEB_TIMEOUT_S,
  MAX_WEB_URL_CHARS,
  MAX_WEB_QUERY_CHARS,
} from "../../kernel/web/limits.js";
import { WEB_FORMATS, type WebfetchOutput } from "../../kernel/web/webfetch.js";
import type { WebsearchOutput } from "../../kernel/web/websearch.js";
import { answerOf, type McpToolSpec } from "./spec.js";

// Reads the open web: not idempotent (pages change) and open-world, but never changes anything.
// (destructiveHint and idempotentHint mean something only when readOnlyHint is false.)
const WEB = { readOnlyHint: true, openWorldHint: true } as const;

const webfetchInput = z.strictObject({
  url: z.string().min(1).max(MAX_WEB_URL_CHARS).describe("The http(s) URL to fetch."),
  format: z.enum(WEB_FORMATS).optional().describe("markdown (default), text, or html (the page as sent)."),
  timeout: z
    .number()
    .int()
    .min(1)
    .max(MAX_WEB_TIMEOUT_S)
    .optional()
    .describe(
      `Seconds for the whole fetch, redirects included (default ${DEFAULT_WEB_TIMEOUT_S}, at most ${MAX_WEB_TIMEOUT_S}).`,
    ),
  offset: z.number().int().min(0).optional().describe("UTF-8 byte offset to continue from: the previous page's `end`."),
});

/**
 * Most UTF-8 bytes of document text one MCP webfetch answer shows: the kernel's 24 KiB page would reach Codex 0.169
 * with its middle cut (it keeps ~12 KB), so MCP shows the page's first 7 KiB and `next` continues right after
 * (docs/MCP.md "Budgets").
 */
export const MCP_WEB_PAGE_BYTES = 7 * 1024;

/** The continuing call: MCP clients have tools, not URLs. */
interface WebfetchNext {
  tool: "webfetch";
  arguments: { url: string; format?: string; offset: number };
}

type McpWebPage = Omit<WebfetchOutput, "next"> & { next?: WebfetchNext };

/** The kernel's page cut to MCP_WEB_PAGE_BYTES (at a line end when one is in the second half, else a UTF-8 boundary). */
function mcpPage(page: WebfetchOutput, url: string, format: string | undefined): McpWebPage {
  const { next: _url, ...rest } = page;
  const bytes = Buffer.from(page.content, "utf8");
  let shown = page;
  if (bytes.length > MCP_WEB_PAGE_BYTES) {
    let cut = MCP_WEB_PAGE_BYTES;
    while (cut > 0 && (bytes[cut]! & 0xc0) === 0x80) cut--;
    const newline = bytes.lastIndexOf(0x0a, cut - 1);
    if (newline >= MCP_WEB_PAGE_BYTES / 2) cut = newline + 1;
    shown = { ...page, content: bytes.subarray(0, cut).toString("utf8"), end: page.offset + cut, complete: false };
  }
  const { next: _next, ...body } = { ...rest, ...shown };
  if (shown.complete) return body;
  return {
    ...body,
    next: { tool: "webfetch", arguments: { url, ...(format !== undefined ? { format } : {}), offset: shown.end } },
  };
}

function webfetchText(page: McpWebPage): string {
  const head = `${page.finalUrl} (${page.contentType || "no content type"}, ${page.charset}, ${page.format}${page.title ? `, "${page.title}"` : ""}) bytes ${page.offset}-${page.end} of ${page.total}`;
  const notes: string[] = [];
  if (page.notice) notes.push(page.notice);
  if (page.next) notes.push(`More follows: call webfetch with ${JSON.stringify(page.next.arguments)}.`);
  return [head, "", page.content, ...(notes.length ? ["", ...notes] : [])].join("\n");
}

const webfetch: McpToolSpec = {
  name: "webfetch",
  kernel: "webfetch",
  title: "Fetch a web page",
  description:
    "Fetch one public http(s) URL as markdown (default), text or HTML, in pages of 7 KiB (`next` is the webfetch call that continues). Binary content and private addresses are refused.",
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
    const answer = answerOf(outcome, (body) => webfetchText(mcpPage(body as unknown as WebfetchOutput, url, format)));
    if (answer.body.ok !== true) return answer;
    return {
      ...answer,
      body: mcpPage(answer.body as unknown as WebfetchOutput, url, format) as unknown as Record<string, unknown>,
    };
  },
};

const websearchInput = z.strictObject({
  query: z.string().min(1).max(MAX_WEB_QUERY_CHARS).describe("What to search the web for."),
  limit: z
    .number()
    .int()
    .min(1)
    .max(MAX_WEB_SEARCH_RESULTS)
    .optional()
    .describe(`Most results (default ${DEFAULT_WEB_SEARCH_RESULTS}, at most ${MAX_WEB_SEARCH_RESULTS}).`),
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
