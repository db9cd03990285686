// webfetch's content handling against a real site on loopback, which the test lets through the operator's
// allowlist explicitly (URLBRIDGE_WEB_ALLOW=127.0.0.1): HTML to markdown and text, charsets, binary refusal,
// size and time bounds, paging with next URLs and range replay, and what the activity log keeps.
import zlib from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ActivityEntry } from "../../../server/store/activity.js";
import { INLINE_CONVERT_CHARS } from "../../../server/kernel/web/convert/convert-worker.js";
import { convertHtml, convertLibraries } from "../../../server/kernel/web/convert/html.js";
import { MAX_WEB_DOWNLOAD_BYTES, WEB_PAGE_BYTES } from "../../../server/kernel/web/limits.js";
import { agentGet, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";
import { answer, startWebSite, type WebSite } from "../../helpers/web-site.js";

const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>Widget &amp; docs</title>
<style>body{color:red}</style><script>document.write("<b>never</b>")</script></head>
<body><nav><a href="/">Home</a></nav><main><h1>Install <code>widget</code></h1>
<p>Run it <strong>once</strong>. See <a href="/guide?step=2">the guide</a>.</p>
<pre><code class="language-sh">npm install widget
</code></pre>
<table><thead><tr><th>Option</th><th>Default</th></tr></thead><tbody><tr><td>size</td><td>10</td></tr></tbody></table>
<img src="img/logo.png" alt="Logo"></main></body></html>`;

// "café – naïve" in windows-1252: é 0xE9, – 0x96, ï 0xEF.
const CP1252 = Buffer.concat([
  Buffer.from("<html><body><p>caf"),
  Buffer.from([0xe9, 0x20, 0x96, 0x20]),
  Buffer.from("na"),
  Buffer.from([0xef]),
  Buffer.from("ve</p></body></html>"),
]);
// "日本" in Shift_JIS, declared only by <meta>.
const SJIS = Buffer.concat([
  Buffer.from('<html><head><meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS"></head><body><p>'),
  Buffer.from([0x93, 0xfa, 0x96, 0x7b]),
  Buffer.from("</p></body></html>"),
]);
const UTF16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("plain text: ünï", "utf16le")]);
const LONG_LINES = Array.from({ length: 3000 }, (_, i) => `line ${String(i).padStart(4, "0")} ${"é".repeat(10)}`).join(
  "\n",
);
// Past INLINE_CONVERT_CHARS: converted on the conversion worker.
const LARGE = `<html><body>${Array.from({ length: 2500 }, (_, i) => `<h2>Section ${i}</h2><p>See <a href="/s/${i}">part ${i}</a>.</p>`).join("\n")}</body></html>`;
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);

let t: TestBridge;
let s: AgentSession;
let site: WebSite;

interface Page {
  ok: boolean;
  errorCode?: string;
  errorDetail?: Record<string, unknown>;
  retryable?: boolean;
  content: string;
  format: string;
  charset: string;
  contentType: string;
  title?: string;
  complete: boolean;
  next?: string;
  offset: number;
  end: number;
  total: number;
  fingerprint: string;
  finalUrl: string;
  downloadTruncated?: true;
  rangeFallback?: { id: string; first: string };
}

const fetchPage = (path: string, params = "") =>
  agentGet<Page>(`${s.r}/u?${params}${params ? "&" : ""}raw=${site.origin}${path}`);

beforeAll(async () => {
  site = await startWebSite({
    "/page.html": answer(PAGE),
    "/moved": answer("", { location: "/page.html" }, 301),
    "/cp1252.html": answer(CP1252, { "content-type": "text/html; charset=windows-1252" }),
    "/sjis.html": answer(SJIS, { "content-type": "text/html" }),
    "/utf16.txt": answer(UTF16, { "content-type": "text/plain" }),
    "/gzip.html": answer(zlib.gzipSync(Buffer.from(PAGE)), {
      "content-type": "text/html; charset=utf-8",
      "content-encoding": "gzip",
    }),
    "/large.html": answer(LARGE),
    "/long.txt": answer(LONG_LINES, { "content-type": "text/plain; charset=utf-8" }),
    "/huge.txt": answer(Buffer.alloc(MAX_WEB_DOWNLOAD_BYTES + 512 * 1024, "a"), { "content-type": "text/plain" }),
    "/logo.png": answer(PNG, { "content-type": "image/png" }),
    "/blob": answer(Buffer.from([0x50, 0x4b, 0x03, 0x04, 0, 0, 0x14, 0]), {
      "content-type": "application/octet-stream",
    }),
    "/readme": answer("# Title\n\nplain markdown", { "content-type": "application/octet-stream" }),
    "/missing": answer("gone", { "content-type": "text/plain" }, 404),
    "/busy": answer("later", { "content-type": "text/plain" }, 503),
    // Headers, then silence: only the timeout ends it.
    "/stall": (_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.write("the first bytes");
    },
  });
  t = await startTestBridge({ URLBRIDGE_WEB_ALLOW: "127.0.0.1" });
  s = await t.session({ web: true });
});

afterAll(async () => {
  await t.close();
  await site.close();
});

describe("webfetch content", () => {
  it("converts HTML to markdown: headings, code with its language, tables, absolute links, no scripts or styles", async () => {
    const page = await fetchPage("/page.html");
    expect(page).toMatchObject({
      ok: true,
      format: "markdown",
      contentType: "text/html",
      charset: "utf-8",
      title: "Widget & docs",
      complete: true,
      offset: 0,
    });
    expect(page.content).toContain("# Install `widget`");
    expect(page.content).toContain("Run it **once**. See [the guide](" + site.origin + "/guide?step=2).");
    expect(page.content).toContain("```sh\nnpm install widget\n```");
    expect(page.content).toContain("| Option | Default |");
    expect(page.content).toContain(`![Logo](${site.origin}/img/logo.png)`);
    expect(page.content).not.toMatch(/never|color:red|<script|Widget &amp;/);
    expect(page.next).toBeUndefined();
  });

  it("converts HTML to text, and returns html as sent", async () => {
    const text = await fetchPage("/page.html", "format=text");
    expect(text.ok).toBe(true);
    expect(text.content).toContain("Install widget");
    expect(text.content).toContain(`the guide <${site.origin}/guide?step=2>`);
    expect(text.content).toMatch(/Option\s+Default\nsize\s+10/);
    expect(text.content).not.toMatch(/[#*`]|never/);
    const html = await fetchPage("/page.html", "format=html");
    expect(html.content).toBe(PAGE);
  });

  it("converts a large page off the main thread to the same markdown and text", async () => {
    expect(LARGE.length).toBeGreaterThan(INLINE_CONVERT_CHARS);
    const markdown = await fetchPage("/large.html");
    expect(markdown).toMatchObject({ ok: true, complete: false });
    expect(markdown.content.startsWith(`## Section 0\n\nSee [part 0](${site.origin}/s/0).`)).toBe(true);
    const text = await fetchPage("/large.html", "format=text");
    expect(text.content.startsWith(`Section 0\n\nSee part 0 <${site.origin}/s/0>.`)).toBe(true);
    // Both equal what the converters give on this thread.
    const inline = convertHtml(LARGE, `${site.origin}/large.html`, "markdown", convertLibraries());
    expect(markdown.total).toBe(Buffer.byteLength(inline));
    expect(markdown.content).toBe(Buffer.from(inline).subarray(0, markdown.end).toString("utf8"));
  });

  it("follows a redirect on the allowed host and names where the content came from", async () => {
    const page = await fetchPage("/moved");
    expect(page).toMatchObject({ ok: true, finalUrl: `${site.origin}/page.html` });
    expect(page.content).toContain("# Install `widget`");
  });

  it.each([
    ["/cp1252.html", "windows-1252", "café – naïve"],
    ["/sjis.html", "shift_jis", "日本"],
    ["/utf16.txt", "utf-16le", "plain text: ünï"],
    ["/gzip.html", "utf-8", "# Install `widget`"],
  ])("decodes %s as %s", async (path, charset, expected) => {
    const page = await fetchPage(path);
    expect(page).toMatchObject({ ok: true, charset });
    expect(page.content).toContain(expected);
  });

  it.each([
    ["/logo.png", "image/png"],
    ["/blob", "application/octet-stream"],
  ])("refuses binary %s", async (path, contentType) => {
    const page = await fetchPage(path);
    expect(page).toMatchObject({
      ok: false,
      errorCode: "web_binary_content",
      retryable: false,
      errorDetail: { contentType },
    });
  });

  it("reads an octet-stream that is text by its bytes", async () => {
    const page = await fetchPage("/readme");
    expect(page).toMatchObject({ ok: true, content: "# Title\n\nplain markdown" });
  });

  it.each([
    ["/missing", 404, false],
    ["/busy", 503, true],
  ])("answers HTTP %s as web_http_status", async (path, status, retryable) => {
    const page = await fetchPage(path);
    expect(page).toMatchObject({ ok: false, errorCode: "web_http_status", retryable, errorDetail: { status } });
  });

  it("pages a long document with exact next URLs, cut at line ends, every page of one version", async () => {
    const first = await fetchPage("/long.txt");
    expect(first).toMatchObject({ ok: true, complete: false, offset: 0, total: Buffer.byteLength(LONG_LINES) });
    expect(first.end).toBeLessThanOrEqual(WEB_PAGE_BYTES);
    expect(first.content.endsWith("\n")).toBe(true);
    const requestsBefore = site.requests.length;
    const pages = [first];
    for (let i = 0; i < 20 && pages.at(-1)!.next; i++) pages.push(await agentGet<Page>(pages.at(-1)!.next!));
    expect(pages.at(-1)!.complete).toBe(true);
    expect(pages.map((p) => p.content).join("")).toBe(LONG_LINES);
    expect(new Set(pages.map((p) => p.fingerprint)).size).toBe(1);
    for (let i = 1; i < pages.length; i++) expect(pages[i]!.offset).toBe(pages[i - 1]!.end);
    // The next pages came from the copy page one fetched.
    expect(site.requests.length).toBe(requestsBefore);
  });

  it("replays a long answer through /z, as every large answer", async () => {
    const page = await fetchPage("/long.txt");
    expect(page.rangeFallback).toBeDefined();
    const part = await (await fetch(page.rangeFallback!.first)).text();
    expect(part.startsWith("URLBRIDGE_RANGE ")).toBe(true);
    expect(part).toContain('"ok":true');
  });

  it("cuts a body past the download limit there and says so", async () => {
    const page = await fetchPage("/huge.txt");
    expect(page).toMatchObject({ ok: true, downloadTruncated: true, total: MAX_WEB_DOWNLOAD_BYTES, complete: false });
  });

  it("gives up on a site that stops sending after the timeout", async () => {
    const page = await fetchPage("/stall", "timeout=1");
    expect(page).toMatchObject({ ok: false, errorCode: "web_timeout", retryable: true });
  });

  it.each([
    ["ftp://127.0.0.1/file", "scheme"],
    ["file:///etc/passwd", "scheme"],
    ["http://user:pw@127.0.0.1/", "credentials"],
    ["example.com/docs", "unparseable"],
  ])("refuses %s (%s)", async (url, reason) => {
    const page = await agentGet<Page>(`${s.r}/u?raw=${url}`);
    expect(page).toMatchObject({ ok: false, errorCode: "web_url_invalid", errorDetail: { reason } });
  });

  it("records the host fetched, never the path, query string or content", async () => {
    await agentGet(`${s.r}/u?raw=${site.origin}/page.html?apikey=hunter2-secret-value`);
    await agentGet(`${s.r}/u?url=${site.origin}/private-path.html`);
    const { body } = await t.api<ActivityEntry[]>("GET", `/api/activity?sessionId=${s.sessionId}&limit=2`);
    expect(body.map((e) => [e.route, e.tool])).toEqual([
      ["/u", "webfetch"],
      ["/u", "webfetch"],
    ]);
    expect(body[0]!.params).toEqual({ url: "127.0.0.1" });
    expect(body[1]!.params).toEqual({ raw: "127.0.0.1" });
    const text = JSON.stringify(body);
    for (const leaked of ["hunter2", "apikey", "page.html", "private-path", "Install", "widget"])
      expect(text).not.toContain(leaked);
  });
});
