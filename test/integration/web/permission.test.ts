// The per-project web permission: off by default, refused on both transports while off (and absent from Init,
// the manifest and MCP listings), and turning it on or off rotates the project's sessions like write/terminal.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentGet, startTestBridge, type TestBridge } from "../../helpers/bridge.js";
import { connectMcpClient, tokenOfBase } from "../../helpers/mcp-clients.js";

let t: TestBridge;

beforeAll(async () => {
  t = await startTestBridge({ URLBRIDGE_WEB_ALLOW: "127.0.0.1" });
});
afterAll(async () => t.close());

interface Init {
  perms: Record<string, boolean>;
  ep: Record<string, [string, string]>;
  bases: { r: string };
}

async function mcpToolNames(readBase: string): Promise<string[]> {
  const client = await connectMcpClient(t.bridge.dataUrl, tokenOfBase(readBase), { sdk: "v2" });
  try {
    return (await client.listTools()).tools.map((tool) => tool.name);
  } finally {
    await client.close();
  }
}

describe("the web permission", () => {
  it("is off for a project created without it, and both tools answer tool_not_enabled on every transport", async () => {
    const s = await t.session({ write: true, terminal: true });
    expect((s.init as unknown as Init).perms).toEqual({ write: true, terminal: true, web: false });
    expect(Object.keys((s.init as unknown as Init).ep)).not.toContain("webfetch");
    for (const [route, tool] of [
      ["u", "webfetch"],
      ["q", "websearch"],
    ] as const) {
      expect(await agentGet(`${s.r}/${route}?raw=https://example.com/`)).toMatchObject({
        ok: false,
        errorCode: "tool_not_enabled",
        agentAction: "enable_in_control_plane",
        errorDetail: { tool, permission: "web" },
      });
    }
    const manifest = await agentGet<{ tools: Array<{ id: string }> }>(`${s.r}/manifest`);
    expect(manifest.tools.map((x) => x.id)).not.toContain("webfetch");
    for (const base of [s.r, s.m!]) {
      const names = await mcpToolNames(base);
      expect(names).toContain("read");
      expect(names).not.toContain("webfetch");
      expect(names).not.toContain("websearch");
    }
  });

  it("rotates the project's sessions when turned on, and the new generation sees both tools; off again rotates again", async () => {
    const s = await t.session();
    const patched = await t.api<{ rotatedSessions: string[]; permissions: unknown }>(
      "PATCH",
      `/api/projects/${s.projectId}`,
      { permissions: { web: true } },
    );
    expect(patched.status).toBe(200);
    expect(patched.body.rotatedSessions).toEqual([s.sessionId]);
    expect(patched.body.permissions).toEqual({ write: false, terminal: false, web: true });
    expect((await fetch(s.initUrl)).status).toBe(404);
    expect((await fetch(`${s.r}/p`)).status).toBe(404);

    const view = await t.api<{ initUrl: string; tools: string[] }>("GET", `/api/sessions/${s.sessionId}`);
    expect(view.body.tools).toEqual(expect.arrayContaining(["webfetch", "websearch"]));
    const init = (await (await fetch(view.body.initUrl)).json()) as Init;
    expect(init.perms).toEqual({ write: false, terminal: false, web: true });
    expect(init.ep.webfetch).toEqual(["r", "/u?raw=<url>"]);
    expect(init.ep.websearch).toEqual(["r", "/q?raw=<query>"]);
    expect(await mcpToolNames(init.bases.r)).toEqual(expect.arrayContaining(["webfetch", "websearch"]));
    const manifest = await agentGet<{ tools: Array<{ id: string; route: string }> }>(`${init.bases.r}/manifest`);
    expect(manifest.tools.filter((x) => x.id.startsWith("web"))).toMatchObject([
      { id: "webfetch", route: "/u" },
      { id: "websearch", route: "/q" },
    ]);

    const off = await t.api<{ rotatedSessions: string[] }>("PATCH", `/api/projects/${s.projectId}`, {
      permissions: { web: false },
    });
    expect(off.body.rotatedSessions).toEqual([s.sessionId]);
    expect((await fetch(view.body.initUrl)).status).toBe(404);
  });

  it("does not rotate when the same value is saved again", async () => {
    const s = await t.session({ web: true });
    const same = await t.api<{ rotatedSessions: string[] }>("PATCH", `/api/projects/${s.projectId}`, {
      permissions: { web: true },
    });
    expect(same.body.rotatedSessions).toEqual([]);
  });
});
