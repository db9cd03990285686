// A `fetch` for the MCP SDK client's StreamableHTTPClientTransport (its documented `fetch` option, a FetchLike) over
// node:http with a keep-alive Agent, instead of the global fetch (undici): the MCP bench's second client, so the
// HTTP rows show what the bridge costs under a lighter client as well as under the default one. Only what that
// transport sends: string bodies, no redirects followed, the answer read whole into a web Response.
import http from "node:http";
import type { FetchLike } from "@modelcontextprotocol/client";

export interface NodeHttpFetch {
  fetch: FetchLike;
  /** Closes the agent's sockets. */
  close(): void;
}

/** Statuses whose web Response must have a null body. */
const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

function headersOf(init: RequestInit | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of new Headers(init?.headers)) headers[name] = value;
  return headers;
}

function bodyOf(init: RequestInit | undefined): string | Uint8Array | undefined {
  const body = init?.body;
  if (body === undefined || body === null) return undefined;
  if (typeof body === "string" || body instanceof Uint8Array) return body;
  throw new Error("node-http-fetch sends string or byte bodies only (the MCP client's JSON-RPC text)");
}

/** One keep-alive connection per fetch (the bench gives each server its own): its calls come one at a time, and the default fetch reuses one connection for them too. */
export function createNodeHttpFetch(): NodeHttpFetch {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const fetch: FetchLike = (url, init) =>
    new Promise<Response>((resolveFetch, rejectFetch) => {
      const body = bodyOf(init);
      const signal = init?.signal ?? undefined;
      const onAbort = () => request.destroy(new Error("aborted"));
      // The transport may pass one signal for every request: each request takes its listener off when it settles.
      const resolve = (response: Response) => (signal?.removeEventListener("abort", onAbort), resolveFetch(response));
      const reject = (error: Error) => (signal?.removeEventListener("abort", onAbort), rejectFetch(error));
      const request = http.request(
        new URL(url),
        { method: init?.method ?? "GET", headers: headersOf(init), agent },
        (response) => {
          const chunks: Buffer[] = [];
          response.on("data", (chunk: Buffer) => chunks.push(chunk));
          response.on("error", reject);
          response.on("end", () => {
            const status = response.statusCode ?? 0;
            const headers = new Headers();
            for (let i = 0; i + 1 < response.rawHeaders.length; i += 2)
              headers.append(response.rawHeaders[i]!, response.rawHeaders[i + 1]!);
            const bytes = Buffer.concat(chunks);
            resolve(
              new Response(NULL_BODY_STATUSES.has(status) ? null : bytes, {
                status,
                statusText: response.statusMessage ?? "",
                headers,
              }),
            );
          });
        },
      );
      request.on("error", (error: Error & { code?: string }) =>
        reject(
          new Error(`${init?.method ?? "GET"} ${String(url)} failed (${error.code ?? error.message})`, {
            cause: error,
          }),
        ),
      );
      if (signal?.aborted) return void request.destroy(new Error("aborted"));
      signal?.addEventListener("abort", onAbort, { once: true });
      request.end(body);
    });
  return { fetch, close: () => agent.destroy() };
}
