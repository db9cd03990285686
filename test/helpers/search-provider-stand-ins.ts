// Stand-ins for the Brave and Tavily search APIs (labelled as such: a process boundary we do not own): loopback
// HTTP servers answering each provider's documented JSON shape, recording every request they receive.
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface ProviderStandIn {
  /** The endpoint URL the bridge is configured with (URLBRIDGE_BRAVE_SEARCH_URL / URLBRIDGE_TAVILY_SEARCH_URL). */
  url: string;
  requests: RecordedRequest[];
  /** The status the next answers carry (200 by default). */
  status: number;
  close(): Promise<void>;
}

async function startStandIn(path: string, respond: (req: RecordedRequest) => unknown): Promise<ProviderStandIn> {
  const standIn: ProviderStandIn = { url: "", requests: [], status: 200, close: async () => undefined };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://stand-in");
      const recorded = {
        method: req.method ?? "",
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      standIn.requests.push(recorded);
      if (url.pathname !== path) return void res.writeHead(404).end();
      if (standIn.status !== 200)
        return void res.writeHead(standIn.status, { "content-type": "application/json" }).end('{"error":"refused"}');
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(respond(recorded)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  standIn.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
  standIn.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return standIn;
}

/** Brave: GET /res/v1/web/search?q=&count=, X-Subscription-Token; answers web.results[] with <strong> in descriptions. */
export function startBraveStandIn(): Promise<ProviderStandIn> {
  return startStandIn("/res/v1/web/search", (req) => {
    const q = req.query.get("q") ?? "";
    const count = Number(req.query.get("count") ?? "10");
    return {
      type: "search",
      query: { original: q },
      web: {
        type: "search",
        results: [
          ...Array.from({ length: count }, (_, i) => ({
            title: `Result ${i + 1} for <strong>${q}</strong>`,
            url: `https://docs.example.org/${i + 1}`,
            description: `The <strong>${q}</strong> page number ${i + 1} &amp; more.`,
            age: "2 days ago",
          })),
          { title: "not a web link", url: "javascript:alert(1)", description: "dropped" },
        ],
      },
    };
  });
}

/** Tavily: POST /search {query, max_results}, Authorization: Bearer; answers results[] with content. */
export function startTavilyStandIn(): Promise<ProviderStandIn> {
  return startStandIn("/search", (req) => {
    const body = JSON.parse(req.body || "{}") as { query?: string; max_results?: number };
    return {
      query: body.query,
      response_time: 0.5,
      results: Array.from({ length: body.max_results ?? 5 }, (_, i) => ({
        title: `Tavily ${i + 1}: ${body.query}`,
        url: `https://tavily.example.net/${i + 1}`,
        content: `Snippet ${i + 1} about ${body.query}.`,
        score: 0.9 - i / 100,
      })),
    };
  });
}
