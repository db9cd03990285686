// Tavily Search API (https://api.tavily.com/search): POST JSON {query, max_results, search_depth}, the key as a
// Bearer token; results in results[] as {title, url, content}.
import type { ProviderEndpoint, SearchProvider } from "./provider.js";
import { plainSnippet, plainTitle, providerJson, resultUrl } from "./provider.js";

interface TavilyAnswer {
  results?: Array<{ title?: unknown; url?: unknown; content?: unknown }>;
}

export function tavilyProvider(endpoint: ProviderEndpoint): SearchProvider {
  return {
    name: "tavily",
    async search(query, count, signal) {
      const request = new Request(endpoint.url, {
        method: "POST",
        headers: {
          accept: "application/json",
          "content-type": "application/json",
          authorization: `Bearer ${endpoint.key}`,
        },
        body: JSON.stringify({
          query,
          max_results: count,
          search_depth: "basic",
          include_answer: false,
          include_images: false,
          include_raw_content: false,
        }),
      });
      const answer = (await providerJson("tavily", request, signal)) as TavilyAnswer;
      const results = Array.isArray(answer?.results) ? answer.results : [];
      return results.flatMap((r) => {
        const link = resultUrl(r.url);
        return link ? [{ title: plainTitle(r.title), url: link, snippet: plainSnippet(r.content) }] : [];
      });
    },
  };
}
