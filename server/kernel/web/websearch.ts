// websearch (/q): a web search through the configured provider (search/: Brave or Tavily, by which key the
// operator set), answered as title, URL and snippet, bounded. Without a key nothing is sent.
import { z } from "zod";
import { defineTool } from "../tool/definition.js";
import { DEFAULT_WEB_SEARCH_RESULTS, MAX_WEB_QUERY_CHARS, MAX_WEB_SEARCH_RESULTS } from "./limits.js";
import { braveProvider } from "./search/brave.js";
import { notConfigured, type SearchProvider, type WebSearchConfig } from "./search/provider.js";
import { tavilyProvider } from "./search/tavily.js";

const schema = z.object({
  query: z.string().trim().min(1).max(MAX_WEB_QUERY_CHARS),
  limit: z.number().int().min(1).max(MAX_WEB_SEARCH_RESULTS).default(DEFAULT_WEB_SEARCH_RESULTS),
});

export const websearchOutput = z.strictObject({
  ok: z.literal(true),
  provider: z.enum(["brave", "tavily"]),
  query: z.string(),
  results: z
    .array(z.strictObject({ title: z.string(), url: z.string(), snippet: z.string() }))
    .describe("Best first; fetch one with webfetch."),
});

export type WebsearchOutput = z.infer<typeof websearchOutput>;

/** The provider that answers: the one `prefer` names when its key is set, else the first with a key. */
export function chooseProvider(config: WebSearchConfig): SearchProvider | undefined {
  if (config.prefer) {
    const endpoint = config[config.prefer];
    if (!endpoint) return undefined;
    return config.prefer === "brave" ? braveProvider(endpoint) : tavilyProvider(endpoint);
  }
  if (config.brave) return braveProvider(config.brave);
  if (config.tavily) return tavilyProvider(config.tavily);
  return undefined;
}

export function createWebsearchTool(config: WebSearchConfig) {
  const provider = chooseProvider(config);
  return defineTool({
    id: "websearch",
    route: "q",
    longRoutes: ["web-search"],
    capability: "read",
    permission: "web",
    description: `Search the web (title, URL, snippet; up to ${MAX_WEB_SEARCH_RESULTS} results); read a result with webfetch.`,
    example: "/q?raw=vitest+fake+timers",
    schema,
    output: websearchOutput,
    url: { rawField: "query" },
    async execute(args, ctx) {
      if (!provider) throw notConfigured(config.prefer);
      const results = await provider.search(args.query, args.limit, ctx.signal);
      return { ok: true as const, provider: provider.name, query: args.query, results: results.slice(0, args.limit) };
    },
  });
}
