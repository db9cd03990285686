// Brave Search API (https://api.search.brave.com/res/v1/web/search): GET with q and count, the key in the
// X-Subscription-Token header; results in web.results[] as {title, url, description}.
import type { ProviderEndpoint, SearchProvider } from "./provider.js";
import { plainSnippet, plainTitle, providerJson, resultUrl } from "./provider.js";

interface BraveAnswer {
  web?: { results?: Array<{ title?: unknown; url?: unknown; description?: unknown }> };
}

export function braveProvider(endpoint: ProviderEndpoint): SearchProvider {
  return {
    name: "brave",
    async search(query, count, signal) {
      const url = new URL(endpoint.url);
      url.searchParams.set("q", query);
      url.searchParams.set("count", String(count));
      const request = new Request(url, {
        method: "GET",
        headers: { accept: "application/json", "x-subscription-token": endpoint.key },
      });
      const answer = (await providerJson("brave", request, signal)) as BraveAnswer;
      const results = Array.isArray(answer?.web?.results) ? answer.web.results : [];
      return results.flatMap((r) => {
        const link = resultUrl(r.url);
        return link ? [{ title: plainTitle(r.title), url: link, snippet: plainSnippet(r.description) }] : [];
      });
    },
  };
}
