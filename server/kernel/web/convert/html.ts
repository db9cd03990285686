// HTML to markdown (turndown with the GFM plugin: tables, strikethrough, task lists) and to plain text
// (html-to-text: tables as aligned text, links shown once). Relative links and images are made absolute against
// the page's final URL so an agent can fetch them; scripts, styles and other non-content elements are dropped.
import { gfm } from "@joplin/turndown-plugin-gfm";
import { convert } from "html-to-text";
import TurndownService from "turndown";
import { MAX_WEB_TITLE_CHARS } from "../limits.js";

const DROPPED = ["script", "style", "noscript", "template", "iframe", "object", "embed", "svg", "canvas", "title", "meta", "link", "head"] as const;

function absolute(href: string | null, base: URL): string | undefined {
  if (!href) return undefined;
  const trimmed = href.trim();
  if (/^(javascript|data|vbscript):/i.test(trimmed)) return undefined;
  try {
    return new URL(trimmed, base).href;
  } catch {
    return trimmed;
  }
}

/** What the rules read of a node (turndown's types name the DOM's HTMLElement, which the server build has no lib for). */
interface ElementLike {
  nodeName: string;
  getAttribute(name: string): string | null;
}

const escapeTitle = (title: string) => title.replace(/"/g, '\\"');
const escapeLinkText = (text: string) => text.replace(/([[\]])/g, "\\$1");

export function htmlToMarkdown(html: string, base: URL): string {
  const service = new TurndownService({ headingStyle: "atx", codeBlockStyle: "fenced", bulletListMarker: "-", emDelimiter: "_", hr: "---" });
  service.use(gfm);
  service.remove([...DROPPED]);
  service.addRule("absoluteLink", {
    filter: (node) => (node as unknown as ElementLike).nodeName === "A" && (node as unknown as ElementLike).getAttribute("href") !== null,
    replacement: (content, node) => {
      const element = node as unknown as ElementLike;
      const href = absolute(element.getAttribute("href"), base);
      if (!href || content.trim() === "") return content;
      const title = element.getAttribute("title");
      return `[${content}](${href}${title ? ` "${escapeTitle(title)}"` : ""})`;
    },
  });
  service.addRule("absoluteImage", {
    filter: "img",
    replacement: (_content, node) => {
      const element = node as unknown as ElementLike;
      const alt = escapeLinkText(element.getAttribute("alt") ?? "");
      const src = absolute(element.getAttribute("src"), base);
      // data: images would fill the page with base64; their alt text is what an agent can use.
      if (!src) return alt;
      return `![${alt}](${src})`;
    },
  });
  return tidy(service.turndown(html));
}

export function htmlToText(html: string, base: URL): string {
  // html-to-text's baseUrl only prefixes; pathRewrite resolves as a browser would.
  const pathRewrite = (path: string) => absolute(path, base) ?? "";
  return tidy(
    convert(html, {
      wordwrap: false,
      selectors: [
        { selector: "a", options: { pathRewrite, hideLinkHrefIfSameAsText: true, linkBrackets: ["<", ">"] } },
        { selector: "img", options: { pathRewrite, linkBrackets: ["<", ">"] } },
        ...(["h1", "h2", "h3", "h4", "h5", "h6"] as const).map((selector) => ({ selector, options: { uppercase: false } })),
        { selector: "table", format: "dataTable", options: { uppercaseHeaderCells: false } },
        ...DROPPED.map((selector) => ({ selector, format: "skip" })),
      ],
    }),
  );
}

/** The document's <title>, as text, when it has one. */
export function htmlTitle(html: string): string | undefined {
  const match = /<title\b[^>]*>([\s\S]{0,4000}?)<\/title>/i.exec(html.slice(0, 65536));
  if (!match) return undefined;
  const text = convert(`<p>${match[1]}</p>`, { wordwrap: false }).replace(/\s+/g, " ").trim();
  if (text === "") return undefined;
  return text.length > MAX_WEB_TITLE_CHARS ? `${text.slice(0, MAX_WEB_TITLE_CHARS)}…` : text;
}

/** Trailing spaces off, runs of blank lines to one, no leading or trailing blank lines. */
function tidy(text: string): string {
  return text
    .replace(/[ \t]+$/gm, "")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}
