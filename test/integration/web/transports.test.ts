// webfetch and websearch answer the same on both transports: the URL routes (/u, /q) and the MCP tools of the
// same name (official v1 client, which validates structuredContent against outputSchema, errors included).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentGet, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";
import { connectMcpClient, tokenOfBase, type McpTestClient } from "../../helpers/mcp-clients.js";
import { startBraveStandIn, type ProviderStandIn } from "../../helpers/search-provider-stand-ins.js";
import { answer, startWebSite, type WebSite } from "../../helpers/web-site.js";
import { MCP_ANSWER_BUDGET_BYTES } from "../../../server/mcp/tools/spec.js";
import { MCP_WEB_PAGE_BYTES } from "../../../server/mcp/tools/web.js";

let t: TestBridge;
let s: AgentSession;
let site: WebSite;
let brave: ProviderStandIn;
let mcp: McpTestClient;

const LONG = Array.from({ length: 2000 }, (_, i) => `<p>paragraph ${i} with <em>some</em> text</p>`).join("\n");

beforeAll(async () => {
  site = await startWebSite({
    "/short.html": answer("<html><head><title>Short</title></head><body><h2>Hello</h2><p>world</p></body></html>"),
    "/long.html": answer(`<html><body>${LONG}</body></html>`),
  });
  brave = await startBraveStandIn();
  t = await startTestBridge({
    URLBRIDGE_WEB_ALLOW: "127.0.0.1",
    URLBRIDGE_BRAVE_API_KEY: "brave-test-key",
    URLBRIDGE_BRAVE_SEARCH_URL: brave.url,
  });
  s = await t.session({ web: true });
  mcp = await connectMcpClient(t.bridge.dataUrl, tokenOfBase(s.r), { sdk: "v1" });
});

afterAll(async () => {
  await mcp.close();
  await t.close();
  await site.close();
  await brave.close();
});

/** The URL route's body without the range-replay pointer the gateway puts in front of large answers. */
async function viaUrl(url: string): Promise<Record<string, unknown>> {
  const { rangeFallback: _fallback, ...body } = await agentGet(url);
  return body;
}

async function viaMcp(
  name: string,
  args: Record<string, unknown>,
): Promise<{ body: Record<string, unknown>; isError: boolean; text: string }> {
  const result = await mcp.callTool({ name, arguments: args });
  const text = (result.content as Array<{ type: string; text?: string }>).map((c) => c.text ?? "").join("\n");
  return { body: result.structuredContent as Record<string, unknown>, isError: result.isError === true, text };
}

describe("web tools on both transports", () => {
  it.each([
    ["a short page as markdown", "/short.html", {}],
    ["a short page as text", "/short.html", { format: "text" }],
    ["the first page of a long document", "/long.html", {}],
    ["a later page of a long document", "/long.html", { format: "html", offset: 30000 }],
  ] as const)("webfetch: %s", async (_label, path, args) => {
    const params = Object.entries(args)
      .map(([k, v]) => `${k}=${v}&`)
      .join("");
    const url = await viaUrl(`${s.r}/u?${params}raw=${site.origin}${path}`);
    const mcpAnswer = await viaMcp("webfetch", { url: `${site.origin}${path}`, ...args });
    expect(url.ok).toBe(true);
    expect(mcpAnswer.isError).toBe(false);
    // MCP shows at most MCP_WEB_PAGE_BYTES of the URL route's page (Codex keeps ~12 KB), and next is a tool call.
    const { content, end, complete, next, ...facts } = mcpAnswer.body;
    const { content: urlContent, end: _end, complete: urlComplete, next: _next, ...urlFacts } = url;
    expect(facts).toEqual(urlFacts);
    expect(String(urlContent).startsWith(String(content))).toBe(true);
    expect(Buffer.byteLength(String(content))).toBeLessThanOrEqual(MCP_WEB_PAGE_BYTES);
    expect(end).toBe(Number(url.offset) + Buffer.byteLength(String(content)));
    if (urlComplete === true && Buffer.byteLength(String(urlContent)) <= MCP_WEB_PAGE_BYTES)
      expect(complete).toBe(true);
    else expect(next).toEqual({ tool: "webfetch", arguments: { url: `${site.origin}${path}`, ...args, offset: end } });
  });

  it("webfetch: following next over MCP shows the whole document once, each page within the budget", async () => {
    const whole = (await viaMcp("webfetch", { url: `${site.origin}/long.html`, format: "text" })).body;
    let args: Record<string, unknown> | undefined = { url: `${site.origin}/long.html`, format: "text" };
    let document = "";
    while (args) {
      const { body, text } = await viaMcp("webfetch", args);
      expect(body.offset).toBe(Buffer.byteLength(document));
      document += String(body.content);
      expect(Buffer.byteLength(JSON.stringify(body))).toBeLessThanOrEqual(MCP_ANSWER_BUDGET_BYTES);
      args = (body.next as { arguments: Record<string, unknown> } | undefined)?.arguments;
      if (args) expect(text).toContain(`call webfetch with ${JSON.stringify(args)}`);
    }
    expect(Buffer.byteLength(document)).toBe(whole.total);
    expect(document).toContain("paragraph 1999 with some text");
  });

  it("webfetch: the same refusal, naming the rule", async () => {
    const url = await viaUrl(`${s.r}/u?raw=http://169.254.169.254/latest/meta-data/`);
    const mcpAnswer = await viaMcp("webfetch", { url: "http://169.254.169.254/latest/meta-data/" });
    expect(url).toMatchObject({ ok: false, errorCode: "web_address_refused", errorDetail: { rule: "link_local" } });
    expect(mcpAnswer.isError).toBe(true);
    expect(mcpAnswer.body).toEqual(url);
    expect(mcpAnswer.text).toContain("Error web_address_refused");
  });

  it("websearch: the same results", async () => {
    const url = await viaUrl(`${s.r}/q?limit=4&raw=undici%20agent%20lookup`);
    const mcpAnswer = await viaMcp("websearch", { query: "undici agent lookup", limit: 4 });
    expect(url).toMatchObject({ ok: true, provider: "brave" });
    expect(mcpAnswer.body).toEqual(url);
    expect(mcpAnswer.text).toContain("https://docs.example.org/1");
  });

  it("both are logged with the host only, on the URL route and on /mcp", async () => {
    await agentGet(`${s.r}/u?raw=${site.origin}/short.html?token-like=abc`);
    await viaMcp("webfetch", { url: `${site.origin}/short.html?token-like=abc` });
    await viaMcp("websearch", { query: "a private question" });
    const { body } = await t.api<Array<{ route: string; params: Record<string, string> }>>(
      "GET",
      `/api/activity?sessionId=${s.sessionId}&limit=3`,
    );
    expect(body.map((e) => [e.route, e.params])).toEqual([
      ["/mcp", { mcp: "websearch", query: "<18 bytes>" }],
      ["/mcp", { mcp: "webfetch", url: "127.0.0.1" }],
      ["/u", { raw: "127.0.0.1" }],
    ]);
    expect(JSON.stringify(body)).not.toMatch(/short\.html|token-like|private question/);
  });
});
