// webfetch (/u): one web page as markdown, text or HTML, through the guard (guard/), fetched to the checked
// address only (fetch/), converted (convert/) and paged like /r: a page of ~24 KiB and an exact next URL.
import { createHash } from "node:crypto";
import { z } from "zod";
import { ErrorCode, ToolError } from "../../errors.js";
import { alignToCharStart } from "../../url-grammar/range-replay.js";
import { defineTool, type ToolContext } from "../tool/definition.js";
import { decodeBody } from "./convert/charset.js";
import { contentKindOf, parseContentType } from "./convert/content-kind.js";
import { HtmlConverter } from "./convert/convert-worker.js";
import { htmlTitle } from "./convert/html.js";
import { documentKey, webDocuments, type WebDocument } from "./document-cache.js";
import { fetchDocument } from "./fetch/fetch-document.js";
import { parseWebUrl } from "./guard/target.js";
import type { WebGuard } from "./guard/vet.js";
import {
  DEFAULT_WEB_TIMEOUT_S,
  MAX_WEB_CONVERT_MS,
  MAX_WEB_DOWNLOAD_BYTES,
  MAX_WEB_TIMEOUT_S,
  MAX_WEB_URL_CHARS,
  WEB_PAGE_BYTES,
} from "./limits.js";

export const WEB_FORMATS = ["markdown", "text", "html"] as const;
export type WebFormat = (typeof WEB_FORMATS)[number];

const schema = z.object({
  url: z.string().min(1).max(MAX_WEB_URL_CHARS),
  format: z.enum(WEB_FORMATS).default("markdown"),
  timeout: z.number().int().min(1).max(MAX_WEB_TIMEOUT_S).default(DEFAULT_WEB_TIMEOUT_S),
  offset: z.number().int().min(0).default(0),
});

type WebfetchArgs = z.infer<typeof schema>;

const nextUrl = z
  .string()
  .describe("Exact URL of the next page of this document; fetch it as given, never rebuild it.");

export const webfetchOutput = z.strictObject({
  ok: z.literal(true),
  url: z.string().describe("The URL as requested (normalized)."),
  finalUrl: z.string().describe("Where the content came from, after redirects."),
  status: z.number().int(),
  contentType: z.string().describe("The response's media type, e.g. text/html; empty when the server sent none."),
  charset: z
    .string()
    .describe("The encoding the body was decoded from (byte order mark, Content-Type, <meta>, else utf-8)."),
  format: z.enum(WEB_FORMATS),
  title: z.string().optional().describe("The HTML document's <title>."),
  fingerprint: z
    .string()
    .describe("sha256 prefix of the whole converted document: equal on every page of one version."),
  total: z.number().int().describe("UTF-8 bytes of the whole converted document."),
  offset: z.number().int().describe("UTF-8 byte offset of this page in the converted document."),
  end: z.number().int().describe("UTF-8 byte offset where this page stops."),
  complete: z.boolean().describe("true: this page reaches the end of the document; false: follow next."),
  next: nextUrl.optional().describe("Present exactly when complete is false."),
  downloadTruncated: z
    .literal(true)
    .optional()
    .describe("The response was longer than the download limit and was cut there."),
  notice: z.string().optional(),
  content: z.string(),
});

export type WebfetchOutput = z.infer<typeof webfetchOutput>;

/** What the fetch prefers, by format; any text type is still accepted. */
const ACCEPT: Record<WebFormat, string> = {
  markdown: "text/markdown;q=1.0, text/html;q=0.9, text/plain;q=0.8, */*;q=0.5",
  text: "text/plain;q=1.0, text/html;q=0.9, */*;q=0.5",
  html: "text/html;q=1.0, application/xhtml+xml;q=0.9, text/plain;q=0.8, */*;q=0.5",
};

const RETRYABLE_STATUS = new Set([408, 425, 429]);

export interface WebfetchDeps {
  guard: WebGuard;
  now?: () => number;
}

async function convertOrFail(
  converter: HtmlConverter,
  html: string,
  base: URL,
  target: "markdown" | "text",
  ctx: ToolContext,
  host: string,
): Promise<string> {
  const result = await converter.convert(html, base.href, target, Date.now() + MAX_WEB_CONVERT_MS, ctx.signal);
  if ("text" in result) return result.text;
  if (result.failed === "timeout") {
    throw new ToolError(
      ErrorCode.webTimeout,
      `Converting ${host}'s page to ${target} took longer than ${MAX_WEB_CONVERT_MS / 1000} s; fetch it with format=html.`,
      {
        detail: { host, stage: "convert", timeoutMs: MAX_WEB_CONVERT_MS },
      },
    );
  }
  throw new ToolError(
    ErrorCode.webFetchFailed,
    `${host}'s page could not be converted to ${target}${result.message ? ` (${result.message.slice(0, 200)})` : ""}; fetch it with format=html.`,
    {
      detail: { host, code: result.failed === "aborted" ? "shutdown" : "convert_failed" },
      retryable: result.failed === "aborted",
    },
  );
}

async function loadDocument(
  args: WebfetchArgs,
  url: URL,
  ctx: ToolContext,
  guard: WebGuard,
  converter: HtmlConverter,
): Promise<WebDocument> {
  const fetched = await fetchDocument(url, {
    guard,
    timeoutMs: args.timeout * 1000,
    maxBytes: MAX_WEB_DOWNLOAD_BYTES,
    accept: ACCEPT[args.format],
    signal: ctx.signal,
  });
  if (fetched.status < 200 || fetched.status > 299) {
    const status = fetched.status;
    throw new ToolError(
      ErrorCode.webHttpStatus,
      `${fetched.host} answered HTTP ${status}${status === 404 ? " (not found): check the URL" : status >= 500 || RETRYABLE_STATUS.has(status) ? ": try again later" : ""}.`,
      {
        detail: { status, host: fetched.host },
        retryable: status >= 500 || RETRYABLE_STATUS.has(status),
      },
    );
  }
  const type = parseContentType(fetched.headers["content-type"]);
  const kind = contentKindOf(type, fetched.body, fetched.host);
  const decoded = decodeBody(fetched.body, type.charset, kind === "html");
  let content = decoded.text;
  let title: string | undefined;
  if (kind === "html") {
    title = htmlTitle(decoded.text);
    if (args.format !== "html")
      content = await convertOrFail(converter, decoded.text, fetched.url, args.format, ctx, fetched.host);
  }
  const bytes = Buffer.from(content, "utf8");
  const notices: string[] = [];
  if (fetched.truncated)
    notices.push(
      `The response was longer than ${MAX_WEB_DOWNLOAD_BYTES} bytes; only its first ${MAX_WEB_DOWNLOAD_BYTES} were converted.`,
    );
  if (decoded.unknownLabel)
    notices.push(`The declared charset "${decoded.unknownLabel}" is not a known encoding; decoded as utf-8.`);
  return {
    finalUrl: fetched.url.href,
    host: fetched.host,
    status: fetched.status,
    contentType: type.essence,
    charset: decoded.charset,
    title,
    bytes,
    fingerprint: createHash("sha256").update(bytes).digest("hex").slice(0, 16),
    downloadTruncated: fetched.truncated,
    notice: notices.length > 0 ? notices.join(" ") : undefined,
  };
}

/** One page from offset: at most WEB_PAGE_BYTES, ending after a newline when one falls in its second half. */
function pageOf(bytes: Buffer, offset: number): { start: number; end: number } {
  const start = alignToCharStart(bytes, offset);
  let end = Math.min(bytes.length, start + WEB_PAGE_BYTES);
  if (end < bytes.length) {
    const newline = bytes.lastIndexOf(0x0a, end - 1);
    end = newline >= start + WEB_PAGE_BYTES / 2 ? newline + 1 : alignToCharStart(bytes, end);
    if (end <= start) end = Math.min(bytes.length, start + WEB_PAGE_BYTES);
  }
  return { start, end };
}

function nextPageUrl(ctx: ToolContext, args: WebfetchArgs, url: string, end: number): string {
  const params: Array<[string, string | number]> = [];
  if (args.format !== "markdown") params.push(["format", args.format]);
  if (args.timeout !== DEFAULT_WEB_TIMEOUT_S) params.push(["timeout", args.timeout]);
  params.push(["offset", end]);
  return ctx.urls.to("r", "u", params, url);
}

export function createWebfetchTool(deps: WebfetchDeps) {
  const now = deps.now ?? Date.now;
  const converter = new HtmlConverter();
  return defineTool({
    id: "webfetch",
    route: "u",
    longRoutes: ["web-fetch"],
    capability: "read",
    permission: "web",
    description:
      "One web page (http/https) as markdown (default), text or html; private and local addresses are refused; follow next when a page stops short.",
    example: "/u?format=markdown&raw=https://example.com/docs",
    schema,
    output: webfetchOutput,
    url: { rawField: "url" },
    async execute(args, ctx) {
      const url = parseWebUrl(args.url);
      const key = documentKey(url.href, args.format);
      const cache = webDocuments.of(ctx.state);
      // Page one is always a fresh fetch; later pages come from the copy page one fetched, while it is kept.
      const document =
        (args.offset > 0 ? cache.get(key, now()) : undefined) ??
        (await loadDocument(args, url, ctx, deps.guard, converter));
      cache.set(key, document, now());
      const total = document.bytes.length;
      if (args.offset > total || (args.offset === total && total > 0)) {
        throw new ToolError(
          ErrorCode.invalidParameter,
          `offset=${args.offset} is past the end of the document (${total} bytes). Start at offset=0.`,
          {
            detail: { parameter: "offset", total },
            repair: ctx.urls.repair({ drop: ["offset"] }),
          },
        );
      }
      const { start, end } = pageOf(document.bytes, args.offset);
      const complete = end >= total;
      return {
        ok: true as const,
        url: url.href,
        finalUrl: document.finalUrl,
        status: document.status,
        contentType: document.contentType,
        charset: document.charset,
        format: args.format,
        ...(document.title !== undefined ? { title: document.title } : {}),
        fingerprint: document.fingerprint,
        total,
        offset: start,
        end,
        complete,
        ...(complete ? {} : { next: nextPageUrl(ctx, args, url.href, end) }),
        ...(document.downloadTruncated ? { downloadTruncated: true as const } : {}),
        ...(document.notice !== undefined ? { notice: document.notice } : {}),
        content: document.bytes.subarray(start, end).toString("utf8"),
      };
    },
  });
}
