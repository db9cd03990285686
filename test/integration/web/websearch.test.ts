// websearch against labelled stand-ins of the Brave and Tavily APIs, reached through their configurable endpoint
// URLs: the request each provider gets, how results map to title/URL/snippet, and the missing-key error.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentGet, startTestBridge, type TestBridge } from "../../helpers/bridge.js";
import {
  startBraveStandIn,
  startTavilyStandIn,
  type ProviderStandIn,
} from "../../helpers/search-provider-stand-ins.js";

interface SearchAnswer {
  ok: boolean;
  provider?: string;
  query?: string;
  results?: Array<{ title: string; url: string; snippet: string }>;
  errorCode?: string;
  errorDetail?: Record<string, unknown>;
  repairHint?: string;
  retryable?: boolean;
  agentAction?: string;
}

let brave: ProviderStandIn;
let tavily: ProviderStandIn;
const bridges: TestBridge[] = [];

async function searchBase(env: Record<string, string>): Promise<string> {
  const t = await startTestBridge(env);
  bridges.push(t);
  return (await t.session({ web: true })).r;
}

beforeAll(async () => {
  brave = await startBraveStandIn();
  tavily = await startTavilyStandIn();
});

afterAll(async () => {
  for (const t of bridges) await t.close();
  await brave.close();
  await tavily.close();
});

describe("websearch", () => {
  it("asks Brave with its key header and maps web.results to plain title, URL and snippet", async () => {
    const r = await searchBase({ URLBRIDGE_BRAVE_API_KEY: "brave-test-key", URLBRIDGE_BRAVE_SEARCH_URL: brave.url });
    const found = await agentGet<SearchAnswer>(`${r}/q?limit=3&raw=vitest+fake+timers`);
    expect(found).toMatchObject({ ok: true, provider: "brave", query: "vitest fake timers" });
    expect(found.results).toEqual(
      [1, 2, 3].map((i) => ({
        title: `Result ${i} for vitest fake timers`,
        url: `https://docs.example.org/${i}`,
        snippet: `The vitest fake timers page number ${i} & more.`,
      })),
    );
    const request = brave.requests.at(-1)!;
    expect(request.method).toBe("GET");
    expect(request.path).toBe("/res/v1/web/search");
    expect(Object.fromEntries(request.query)).toEqual({ q: "vitest fake timers", count: "3" });
    expect(request.headers["x-subscription-token"]).toBe("brave-test-key");
    expect(request.headers.accept).toBe("application/json");
  });

  it("asks Tavily with a Bearer key and a JSON body, and maps results", async () => {
    const r = await searchBase({ URLBRIDGE_TAVILY_API_KEY: "tvly-test-key", URLBRIDGE_TAVILY_SEARCH_URL: tavily.url });
    const found = await agentGet<SearchAnswer>(`${r}/q?query=zod+4+migration`);
    expect(found).toMatchObject({ ok: true, provider: "tavily", query: "zod 4 migration" });
    expect(found.results).toHaveLength(8);
    expect(found.results![0]).toEqual({
      title: "Tavily 1: zod 4 migration",
      url: "https://tavily.example.net/1",
      snippet: "Snippet 1 about zod 4 migration.",
    });
    const request = tavily.requests.at(-1)!;
    expect(request.method).toBe("POST");
    expect(request.headers.authorization).toBe("Bearer tvly-test-key");
    expect(request.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(request.body)).toMatchObject({ query: "zod 4 migration", max_results: 8, search_depth: "basic" });
  });

  it("uses the provider URLBRIDGE_WEBSEARCH_PROVIDER names when both have keys", async () => {
    const r = await searchBase({
      URLBRIDGE_BRAVE_API_KEY: "brave-test-key",
      URLBRIDGE_BRAVE_SEARCH_URL: brave.url,
      URLBRIDGE_TAVILY_API_KEY: "tvly-test-key",
      URLBRIDGE_TAVILY_SEARCH_URL: tavily.url,
      URLBRIDGE_WEBSEARCH_PROVIDER: "tavily",
    });
    const before = brave.requests.length;
    expect(await agentGet<SearchAnswer>(`${r}/q?limit=1&raw=both`)).toMatchObject({ ok: true, provider: "tavily" });
    expect(brave.requests.length).toBe(before);
  });

  it("sends nothing without a key and names the variables to set", async () => {
    const r = await searchBase({ URLBRIDGE_BRAVE_SEARCH_URL: brave.url, URLBRIDGE_TAVILY_SEARCH_URL: tavily.url });
    const before = brave.requests.length + tavily.requests.length;
    const found = await agentGet<SearchAnswer>(`${r}/q?raw=anything`);
    expect(found).toMatchObject({
      ok: false,
      errorCode: "web_search_not_configured",
      retryable: false,
      agentAction: "stop",
      errorDetail: { variables: ["URLBRIDGE_BRAVE_API_KEY", "URLBRIDGE_TAVILY_API_KEY"] },
    });
    expect(found.repairHint).toContain("URLBRIDGE_BRAVE_API_KEY or URLBRIDGE_TAVILY_API_KEY");
    expect(brave.requests.length + tavily.requests.length).toBe(before);
  });

  it("reports a provider that refuses the key as not retryable", async () => {
    const r = await searchBase({ URLBRIDGE_BRAVE_API_KEY: "revoked-key", URLBRIDGE_BRAVE_SEARCH_URL: brave.url });
    brave.status = 401;
    try {
      expect(await agentGet<SearchAnswer>(`${r}/q?raw=x`)).toMatchObject({
        ok: false,
        errorCode: "web_search_failed",
        retryable: false,
        errorDetail: { provider: "brave", status: 401 },
      });
    } finally {
      brave.status = 200;
    }
  });
});
