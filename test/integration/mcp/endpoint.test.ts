// The MCP endpoint on the data plane (issue 12 item 1): both official clients over both capability forms, the
// stateless JSON-only answers on raw HTTP, the opaque 404s, OAuth probes, methods, body bound and parse errors.
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MCP_MAX_BODY_BYTES } from "../../../server/mcp/http.js";
import { OPAQUE_NOT_FOUND } from "../../../server/gateway/respond.js";
import { createLogger } from "../../../server/log.js";
import { UNKNOWN_TOKEN_FREE } from "../../../server/gateway/unknown-token-throttle.js";
import { startTestBridge, TEST_OPERATOR_TOKEN } from "../../helpers/bridge.js";
import {
  connectMcpClient,
  startMcpBridge,
  tokenOfBase,
  type CapabilityForm,
  type McpBridge,
  type McpSdk,
} from "../../helpers/mcp-clients.js";

const MODERN = "2026-07-28";
const LEGACY_INIT = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } },
};
const modernMeta = {
  "io.modelcontextprotocol/protocolVersion": MODERN,
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "0" },
  "io.modelcontextprotocol/clientCapabilities": {},
};
const MODERN_LIST = { jsonrpc: "2.0", id: 2, method: "tools/list", params: { _meta: modernMeta } };
const MODERN_HEADERS = { "mcp-protocol-version": MODERN, "mcp-method": "tools/list" };

let b: McpBridge;

beforeAll(async () => {
  b = await startMcpBridge({ write: true });
  fs.writeFileSync(path.join(b.tb.projectDir, "hello.txt"), "hello\n");
});
afterAll(async () => {
  await b?.close();
});

function url(path: string): string {
  return `${b.tb.bridge.dataUrl}${path}`;
}

/** A raw POST of a JSON-RPC body (or bytes as given) with the usual MCP headers unless overridden. */
function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url(path), {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body: typeof body === "string" || body instanceof Uint8Array ? body : JSON.stringify(body),
  });
}

/** Status, headers (without the per-connection ones) and body bytes, for byte-for-byte comparisons. */
async function snapshot(res: Response): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  const headers: Record<string, string> = {};
  for (const [k, v] of res.headers) if (!["date", "connection", "keep-alive"].includes(k)) headers[k] = v;
  return { status: res.status, headers, body: await res.text() };
}

const clientCases: Array<[McpSdk, CapabilityForm]> = [
  ["v2", "path"],
  ["v2", "bearer"],
  ["v1", "path"],
  ["v1", "bearer"],
];

describe("official clients", () => {
  it.each(clientCases)("%s client over the %s form initializes and lists tools", async (sdk, form) => {
    const client = await b.connect("r", { sdk, form });
    if (sdk === "v2") expect(client.protocolVersion).toBe(MODERN);
    else expect(client.protocolVersion).toMatch(/^2025-/);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain("read");
    await client.close();
  });

  it("v2 client on the legacy handshake speaks a 2025 revision", async () => {
    const client = await b.connect("m", { sdk: "v2", form: "bearer", negotiation: "legacy" });
    expect(client.protocolVersion).toMatch(/^2025-/);
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    await client.close();
  });

  it.each(["v1", "v2"] as const)("no answer the %s client ever gets is a stream", async (sdk) => {
    const seen: string[] = [];
    const recording: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      seen.push(`${init?.method ?? "GET"} ${res.status} ${res.headers.get("content-type") ?? "-"}`);
      return res;
    };
    const client = await b.connect("r", { sdk, form: "bearer", fetch: recording });
    await client.listTools();
    const read = await client.callTool({ name: "read", arguments: { path: "hello.txt" } });
    expect(read.isError).toBeFalsy();
    await client.close();
    expect(seen.length).toBeGreaterThanOrEqual(3);
    for (const line of seen) expect(line).not.toMatch(/event-stream/);
    expect(seen.filter((l) => l.startsWith("POST 200")).every((l) => l.endsWith("application/json"))).toBe(true);
  });
});

describe("raw HTTP", () => {
  it.each([
    ["only application/json", "application/json"],
    ["only text/event-stream", "text/event-stream"],
    ["no Accept at all", ""],
  ])("Accept with %s still gets a JSON answer", async (_, accept) => {
    const res = await post(`/v0/${b.tokens.r}/mcp`, LEGACY_INIT, { accept });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    const body = (await res.json()) as { result: { protocolVersion: string } };
    expect(body.result.protocolVersion).toBe("2025-06-18");
  });

  it("a modern (2026-07-28) request with only application/json gets JSON", async () => {
    const res = await post(`/v0/${b.tokens.r}/mcp`, MODERN_LIST, { ...MODERN_HEADERS, accept: "application/json" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    const body = (await res.json()) as { result: { tools: Array<{ name: string }> } };
    expect(body.result.tools.map((t) => t.name)).toContain("read");
  });

  it.each([
    ["legacy", { jsonrpc: "2.0", method: "notifications/initialized" }, {}],
    [
      "legacy cancelled",
      { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 7, reason: "done" } },
      {},
    ],
    [
      "modern",
      { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 7, _meta: modernMeta } },
      { "mcp-protocol-version": MODERN, "mcp-method": "notifications/cancelled" },
    ],
  ])("a %s notification is answered 202 with no body", async (_, message, headers) => {
    const res = await post("/mcp", message, { authorization: `Bearer ${b.tokens.m}`, ...headers });
    expect(res.status).toBe(202);
    expect(await res.text()).toBe("");
  });

  it("answers carry no-store and no stack, and never set a session id", async () => {
    const res = await post("/mcp", LEGACY_INIT, { authorization: `Bearer ${b.tokens.r}` });
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("mcp-session-id")).toBeNull();
  });

  it.each(["GET", "DELETE", "PUT", "HEAD"])("%s on both endpoint paths answers 405 Allow: POST", async (method) => {
    for (const path of ["/mcp", `/v0/${b.tokens.r}/mcp`, "/v0/zzzzzzzz/mcp"]) {
      const res = await fetch(url(path), {
        method,
        headers: { authorization: `Bearer ${b.tokens.r}`, accept: "text/event-stream" },
      });
      expect([path, res.status, res.headers.get("allow")]).toEqual([path, 405, "POST"]);
    }
  });

  it("other paths keep their answers: 405 Allow: GET for other POSTs, the GET grammar for /v0/<cap>/mcp/", async () => {
    const other = await post(`/v0/${b.tokens.r}/r`, LEGACY_INIT);
    expect([other.status, other.headers.get("allow")]).toEqual([405, "GET"]);
    const slash = await post(`/v0/${b.tokens.r}/mcp/`, LEGACY_INIT);
    expect(slash.status).toBe(405);
    const init = await fetch(url("/v0/init/mcp"));
    expect(await init.text()).toBe(OPAQUE_NOT_FOUND);
  });

  it.each([
    "/.well-known/oauth-protected-resource",
    "/.well-known/oauth-protected-resource/mcp",
    "/.well-known/oauth-authorization-server",
    "/.well-known/oauth-authorization-server/mcp",
    "/.well-known/openid-configuration",
    "/mcp/.well-known/openid-configuration",
    "/register",
  ])("%s is 404 (never 401) whatever the method, bearer attached", async (path) => {
    for (const method of ["GET", "POST", "OPTIONS"]) {
      const res = await fetch(url(path), {
        method,
        headers: { authorization: `Bearer ${b.tokens.r}`, "content-type": "application/json" },
        ...(method === "POST" ? { body: "{}" } : {}),
      });
      expect([method, res.status, res.headers.get("www-authenticate")]).toEqual([method, 404, null]);
    }
  });

  it("a body over the bound is refused with a JSON-RPC error (declared length and chunked)", async () => {
    const big = JSON.stringify({
      jsonrpc: "2.0",
      id: 3,
      method: "tools/call",
      params: { name: "write", arguments: { path: "a", content: "x".repeat(MCP_MAX_BODY_BYTES) } },
    });
    const res = await post("/mcp", big, { authorization: `Bearer ${b.tokens.m}` });
    expect(res.status).toBe(413);
    const body = (await res.json()) as { id: unknown; error: { code: number; message: string } };
    expect(body.id).toBeNull();
    expect(body.error.code).toBe(-32000);
    expect(body.error.message).toMatch(/1 MiB.*Split the content/);

    const chunked = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = http.request(
        url(`/v0/${b.tokens.m}/mcp`),
        { method: "POST", headers: { "content-type": "application/json", accept: "application/json" } },
        (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (d: string) => (text += d));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
        },
      );
      req.on("error", reject);
      for (let i = 0; i < 20; i++) req.write("x".repeat(64 * 1024));
      req.end();
    });
    expect(chunked.status).toBe(413);
    expect((JSON.parse(chunked.text) as { error: { code: number } }).error.code).toBe(-32000);
  });

  it("a body at the bound is read (and answered by JSON-RPC, not refused)", async () => {
    const padded = JSON.stringify(LEGACY_INIT).padEnd(MCP_MAX_BODY_BYTES, " ");
    const res = await post("/mcp", padded, { authorization: `Bearer ${b.tokens.r}` });
    expect(res.status).toBe(200);
  });

  it.each([
    ["truncated JSON", '{"jsonrpc":"2.0","id":1,"method":'],
    ["not JSON", "hello"],
    ["empty body", ""],
  ])("%s is a JSON-RPC parse error, never a 500", async (_, text) => {
    const res = await post(`/v0/${b.tokens.r}/mcp`, text);
    expect(res.status).toBe(400);
    const body = (await res.json()) as { jsonrpc: string; id: unknown; error: { code: number; message: string } };
    expect(body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } });
    expect(body.error.message).not.toMatch(/\bat .*\.(ts|js):\d+/);
  });

  it("a non-JSON Content-Type is refused 415 with a JSON-RPC error", async () => {
    const res = await post("/mcp", LEGACY_INIT, {
      authorization: `Bearer ${b.tokens.r}`,
      "content-type": "text/plain",
    });
    expect(res.status).toBe(415);
    expect(((await res.json()) as { error: { code: number } }).error.code).toBe(-32000);
  });

  it("subscriptions/listen (a stream-only method) is refused in JSON", async () => {
    const res = await post(
      "/mcp",
      { jsonrpc: "2.0", id: 9, method: "subscriptions/listen", params: { _meta: modernMeta } },
      { authorization: `Bearer ${b.tokens.r}`, "mcp-protocol-version": MODERN, "mcp-method": "subscriptions/listen" },
    );
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await res.json()).toMatchObject({ id: 9, error: { code: -32601 } });
  });

  it("the control plane never serves /mcp", async () => {
    for (const path of ["/mcp", `/v0/${b.tokens.r}/mcp`]) {
      const res = await fetch(`${b.tb.bridge.controlUrl}${path}`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          authorization: `Bearer ${b.tokens.r}`,
        },
        body: JSON.stringify(LEGACY_INIT),
      });
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(await res.text()).not.toMatch(/protocolVersion|jsonrpc/);
    }
    // Not even with the operator's own token.
    const operator = await fetch(`${b.tb.bridge.controlUrl}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${TEST_OPERATOR_TOKEN}` },
      body: JSON.stringify(LEGACY_INIT),
    });
    expect(await operator.text()).not.toMatch(/protocolVersion|jsonrpc/);
  });
});

describe("capabilities that open nothing", () => {
  /** The URL routes' answer for the same token: what every MCP refusal must equal byte for byte. */
  async function urlRouteAnswer(token: string) {
    return snapshot(await fetch(url(`/v0/${encodeURIComponent(token)}/r?p=a.txt`)));
  }

  it.each([
    ["unknown", "zzzzzzzz"],
    ["malformed (too short)", "abc"],
    ["malformed (punctuation)", "abc!def$"],
    ["malformed (too long)", "a".repeat(40)],
  ])("an %s capability gets the URL routes' opaque 404 on both forms", async (_, token) => {
    const expected = await urlRouteAnswer(token);
    expect(expected.status).toBe(404);
    expect(expected.body).toBe(OPAQUE_NOT_FOUND);
    const inPath = await snapshot(await post(`/v0/${encodeURIComponent(token)}/mcp`, LEGACY_INIT));
    const asBearer = await snapshot(await post("/mcp", LEGACY_INIT, { authorization: `Bearer ${token}` }));
    expect(inPath).toEqual(expected);
    expect(asBearer).toEqual(expected);
  });

  it.each([
    ["no Authorization", {}],
    ["another scheme", { authorization: "Basic dXNlcjpwYXNz" }],
    ["an empty bearer", { authorization: "Bearer " }],
  ])("/mcp with %s is the opaque 404", async (_, headers: Record<string, string>) => {
    const expected = await urlRouteAnswer("zzzzzzzz");
    expect(await snapshot(await post("/mcp", LEGACY_INIT, headers))).toEqual(expected);
  });

  it("rotated and disabled capabilities are the opaque 404, and clients fail to connect", async () => {
    const own = await b.tb.session({ write: true, name: "to-rotate" });
    const old = { r: tokenOfBase(own.r), m: tokenOfBase(own.m!) };
    expect((await post(`/v0/${old.r}/mcp`, LEGACY_INIT)).status).toBe(200);
    const rotated = await b.tb.api<{ initUrl: string }>("POST", `/api/sessions/${own.sessionId}/rotate`);
    expect(rotated.status).toBe(200);
    const expected = await urlRouteAnswer(old.r);
    for (const token of [old.r, old.m]) {
      expect(await snapshot(await post(`/v0/${token}/mcp`, LEGACY_INIT))).toEqual(expected);
      expect(await snapshot(await post("/mcp", LEGACY_INIT, { authorization: `Bearer ${token}` }))).toEqual(expected);
    }
    await expect(connectMcpClient(b.tb.bridge.dataUrl, old.r, { sdk: "v1", form: "bearer" })).rejects.toThrow();

    const fresh = (await (await fetch(rotated.body.initUrl)).json()) as { bases: { r: string } };
    const freshR = tokenOfBase(fresh.bases.r);
    expect((await post(`/v0/${freshR}/mcp`, LEGACY_INIT)).status).toBe(200);
    expect((await b.tb.api("POST", `/api/sessions/${own.sessionId}/disable`)).status).toBe(200);
    expect(await snapshot(await post(`/v0/${freshR}/mcp`, LEGACY_INIT))).toEqual(await urlRouteAnswer(freshR));
    await expect(connectMcpClient(b.tb.bridge.dataUrl, freshR, { sdk: "v2", form: "path" })).rejects.toThrow();
  });

  it("unknown capabilities on MCP count toward the URL routes' unknown-token throttle", async () => {
    const lines: string[] = [];
    const t = await startTestBridge(
      { URLBRIDGE_UNKNOWN_TOKEN_THROTTLE: "1" },
      { log: createLogger("warn", (l) => lines.push(l)) },
    );
    try {
      const miss = (i: number) => {
        const token = `Zz${String(i).padStart(6, "0")}`;
        const init = {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(LEGACY_INIT),
        };
        return i % 2 === 0
          ? fetch(`${t.bridge.dataUrl}/v0/${token}/mcp`, init)
          : fetch(`${t.bridge.dataUrl}/mcp`, {
              ...init,
              headers: { ...init.headers, authorization: `Bearer ${token}` },
            });
      };
      for (let i = 0; i < UNKNOWN_TOKEN_FREE; i++) expect((await miss(i)).status).toBe(404);
      expect(lines).toEqual([]);
      // One more from the same source is held, and the flood summary (without tokens) names it.
      const held = await miss(UNKNOWN_TOKEN_FREE);
      expect(await held.text()).toBe(OPAQUE_NOT_FOUND);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/unknown capability tokens: 21 in/);
      expect(lines[0]).not.toMatch(/Zz\d{6}/);
    } finally {
      await t.close();
    }
  });

  it("a broken store is a JSON-RPC internal error without a stack, and the operator's log has it", async () => {
    const lines: string[] = [];
    const t = await startTestBridge({}, { log: createLogger("error", (l) => lines.push(l)) });
    try {
      // The state store going away under the data plane: the capability lookup throws.
      t.bridge.store.close();
      const res = await fetch(`${t.bridge.dataUrl}/mcp`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer Zz000000" },
        body: JSON.stringify(LEGACY_INIT),
      });
      expect(res.status).toBe(500);
      const body = (await res.json()) as { id: unknown; error: { code: number; message: string } };
      expect(body).toMatchObject({ id: null, error: { code: -32603 } });
      expect(body.error.message).not.toMatch(/database|\.ts:|\.js:/);
      expect(lines.join("\n")).toMatch(/MCP request failed/);
    } finally {
      await t.close().catch(() => {});
    }
  });
});
