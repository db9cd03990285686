// HTML to markdown (turndown with the GFM plugin: tables, strikethrough, task lists) and to plain text
// (html-to-text: tables as aligned text, links shown once). Relative links and images are made absolute against
// the page's final URL so an agent can fetch them; scripts, styles and other non-content elements are dropped.
// convertHtml is self-contained on purpose (the libraries come in as an argument): its source text is also the
// conversion worker's program (convert-worker.ts), since a large page takes the converters seconds.
import { createRequire } from "node:module";
import type { gfm } from "@joplin/turndown-plugin-gfm";
import type { convert } from "html-to-text";
import type TurndownService from "turndown";
import { MAX_WEB_TITLE_CHARS } from "../limits.js";

export type HtmlTarget = "markdown" | "text";

export interface ConvertLibraries {
  TurndownService: typeof TurndownService;
  gfm: typeof gfm;
  convert: typeof convert;
}

/** The packages the worker requires, by the names ConvertLibraries uses. */
export const CONVERT_LIBRARY_PACKAGES = {
  TurndownService: "turndown",
  gfm: "@joplin/turndown-plugin-gfm",
  convert: "html-to-text",
} as const;

const require = createRequire(import.meta.url);
let loaded: ConvertLibraries | undefined;

/**
 * The converters, loaded on the first conversion rather than at start-up: with their DOM they are over a
 * megabyte of JavaScript that only a webfetch needs (docs/PERFORMANCE.md, start-up).
 */
export function convertLibraries(): ConvertLibraries {
  loaded ??= {
    TurndownService: require(CONVERT_LIBRARY_PACKAGES.TurndownService) as typeof TurndownService,
    gfm: (require(CONVERT_LIBRARY_PACKAGES.gfm) as { gfm: typeof gfm }).gfm,
    convert: (require(CONVERT_LIBRARY_PACKAGES.convert) as { convert: typeof convert }).convert,
  };
  return loaded;
}

export function convertHtml(html: string, baseHref: string, target: HtmlTarget, libs: ConvertLibraries): string {
  const dropped = [
    "script",
    "style",
    "noscript",
    "template",
    "iframe",
    "object",
    "embed",
    "svg",
    "canvas",
    "title",
    "meta",
    "link",
    "head",
  ];
  const base = new URL(baseHref);
  const absolute = (href: string | null): string | undefined => {
    if (!href) return undefined;
    const trimmed = href.trim();
    if (/^(javascript|data|vbscript):/i.test(trimmed)) return undefined;
    try {
      return new URL(trimmed, base).href;
    } catch {
      return trimmed;
    }
  };
  // Trailing spaces off, runs of blank lines to one, no leading or trailing blank lines.
  // (Trailing spaces found by a backward scan per line: /[ \t]+$/gm is quadratic in a run of spaces or tabs that
  // does not end its line, such as a hostile <pre>.) Line ends as that expression's $ saw them.
  const trimLineEnds = (text: string) =>
    text
      .split(/([\n\r\u2028\u2029])/)
      .map((part, i) => {
        if (i % 2 === 1) return part;
        let end = part.length;
        while (end > 0 && (part[end - 1] === " " || part[end - 1] === "\t")) end--;
        return part.slice(0, end);
      })
      .join("");
  const tidy = (text: string) =>
    trimLineEnds(text)
      .replace(/\n{3,}/g, "\n\n")
      .trim();
  // What the rules read of a node (turndown's types name the DOM's HTMLElement, which the server build has no lib for).
  type ElementLike = { nodeName: string; getAttribute(name: string): string | null };
  if (target === "text") {
    // html-to-text's baseUrl only prefixes; pathRewrite resolves as a browser would.
    const pathRewrite = (path: string) => absolute(path) ?? "";
    return tidy(
      libs.convert(html, {
        wordwrap: false,
        selectors: [
          { selector: "a", options: { pathRewrite, hideLinkHrefIfSameAsText: true, linkBrackets: ["<", ">"] } },
          { selector: "img", options: { pathRewrite, linkBrackets: ["<", ">"] } },
          ...["h1", "h2", "h3", "h4", "h5", "h6"].map((selector) => ({ selector, options: { uppercase: false } })),
          { selector: "table", format: "dataTable", options: { uppercaseHeaderCells: false } },
          ...dropped.map((selector) => ({ selector, format: "skip" })),
        ],
      }),
    );
  }
  const service = new libs.TurndownService({
    headingStyle: "atx",
    codeBlockStyle: "fenced",
    bulletListMarker: "-",
    emDelimiter: "_",
    hr: "---",
  });
  service.use(libs.gfm);
  service.remove(dropped as Parameters<typeof service.remove>[0]);
  service.addRule("absoluteLink", {
    filter: (node) =>
      (node as unknown as ElementLike).nodeName === "A" &&
      (node as unknown as ElementLike).getAttribute("href") !== null,
    replacement: (content, node) => {
      const element = node as unknown as ElementLike;
      const href = absolute(element.getAttribute("href"));
      if (!href || content.trim() === "") return content;
      const title = element.getAttribute("title");
      return `[${content}](${href}${title ? ` "${title.replace(/"/g, '\\"')}"` : ""})`;
    },
  });
  service.addRule("absoluteImage", {
    filter: "img",
    replacement: (_content, node) => {
      const element = node as unknown as ElementLike;
      const alt = (element.getAttribute("alt") ?? "").replace(/([[\]])/g, "\\$1");
      const src = absolute(element.getAttribute("src"));
      // data: images would fill the page with base64; their alt text is what an agent can use.
      return src ? `![${alt}](${src})` : alt;
    },
  });
  return tidy(service.turndown(html));
}

/** The document's <title>, as text, when it has one (a small slice: converted on the calling thread). */
export function htmlTitle(html: string): string | undefined {
  // The first <title ...> tag, then its close within 4000 characters: two linear searches. (One expression,
  // /<title\b[^>]*>([\s\S]{0,4000}?)<\/title>/i, rescanned from every "<title" of a hostile page.)
  const head = html.slice(0, 65536);
  const open = /<title\b[^<>]*>/i.exec(head);
  if (!open) return undefined;
  const from = open.index + open[0].length;
  const length = head.slice(from, from + 4000 + "</title>".length).search(/<\/title>/i);
  if (length === -1) return undefined;
  const text = convertLibraries()
    .convert(`<p>${head.slice(from, from + length)}</p>`, { wordwrap: false })
    .replace(/\s+/g, " ")
    .trim();
  if (text === "") return undefined;
  return text.length > MAX_WEB_TITLE_CHARS ? `${text.slice(0, MAX_WEB_TITLE_CHARS)}…` : text;
}
