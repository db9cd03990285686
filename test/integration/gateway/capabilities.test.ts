import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentGet, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";

describe("capability routing", () => {
  let t: TestBridge;
  let s: AgentSession;
  let readToken: string;
  let mutationToken: string;
  let initToken: string;

  beforeAll(async () => {
    t = await startTestBridge();
    s = await t.session({ write: true, terminal: true });
    readToken = s.r.split("/v0/")[1]!;
    mutationToken = s.m!.split("/v0/")[1]!;
    initToken = s.initUrl.split("/v0/init/")[1]!;
  });
  afterAll(async () => t.close());

  async function raw(path: string, init?: RequestInit) {
    const res = await fetch(`${t.bridge.dataUrl}${path}`, init);
    return { status: res.status, body: await res.text() };
  }

  it("answers every unknown, malformed or wrong-kind token with the same opaque 404", async () => {
    const answers = await Promise.all([
      raw("/v0/ZZZZZZZZ/t?path=."),
      raw("/v0/short/t?path=."),
      raw("/v0/waytoolongtoken/t?path=."),
      raw(`/v0/${initToken}/t?path=.`),
      raw(`/v0/init/${readToken}`),
      raw(`/v0/init/${mutationToken}`),
      raw("/v0/init/ZZZZZZZZ"),
      raw("/v0/bootstrap/ZZZZZZZZ"),
      raw("/v0/init/"),
    ]);
    for (const a of answers) expect(a).toEqual(answers[0]);
    expect(answers[0]!.status).toBe(404);
    expect(answers[0]!.body).not.toMatch(/token|session|capab/i);
  });

  it.each(["/", "/api/health", "/api/projects", "/index.html", "/v0", "/v1/x/t"])(
    "serves nothing at %s",
    async (path) => {
      const a = await raw(path);
      expect(a.status).toBe(404);
    },
  );

  it("refuses methods other than GET without executing anything", async () => {
    const a = await raw(`/v0/${readToken}/t?path=.`, { method: "POST" });
    expect(a.status).toBe(405);
  });

  it("serves Init at /v0/init and the /v0/bootstrap alias", async () => {
    const a = await agentGet(`${t.bridge.dataUrl}/v0/init/${initToken}`);
    const b = await agentGet(`${t.bridge.dataUrl}/v0/bootstrap/${initToken}`);
    expect(a).toEqual(b);
    expect(a.ok).toBe(true);
  });

  it("serves a read route called on the mutation base (the mutation capability implies read)", async () => {
    const onMutation = await agentGet(`${s.m}/t?path=.`);
    expect(onMutation).toEqual(await agentGet(`${s.r}/t?path=.`));
    expect(onMutation.ok).toBe(true);
  });

  it("repairs /s?path= on the read base to /t", async () => {
    const r = await agentGet(`${s.r}/s?path=.`);
    expect(r).toMatchObject({ ok: false, errorCode: "unknown_route", repair: `${s.r}/t?path=.` });
  });

  it("guides an unknown route with the routes of that base", async () => {
    const r = await agentGet<{ ok: boolean; errorCode: string; errorDetail: { routes: string[] } }>(`${s.r}/nope`);
    expect(r.errorCode).toBe("unknown_route");
    expect(r.errorDetail.routes).toContain("/t (stat)");
  });

  it("accepts long route aliases", async () => {
    expect((await agentGet(`${s.r}/stat?path=.`)).ok).toBe(true);
  });

  it("answers tool errors with HTTP 200 and a structured body", async () => {
    const res = await fetch(`${s.r}/t?nope=1`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { repairHint?: unknown };
    expect(body).toMatchObject({ ok: false, errorCode: "unknown_parameter", retryable: false });
    expect(typeof body.repairHint).toBe("string");
  });

  it("sends no-store and no-referrer headers on agent responses", async () => {
    const res = await fetch(`${s.r}/t?path=.`);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
  });
});

describe("read-only projects", () => {
  let t: TestBridge;
  beforeAll(async () => {
    t = await startTestBridge();
  });
  afterAll(async () => t.close());

  it("advertise no mutation base, and a mutation token still reaches only read routes via repair", async () => {
    const s = await t.session({ write: false, terminal: false });
    expect(s.m).toBeUndefined();
    expect(s.init.bases).not.toHaveProperty("m");
  });

  it.each(["/j?call=auto:write:0", "/s?blob=a&i=0&count=1&raw=x", "/b?blob=a", "/w?path=a&raw=x", "/x?raw=true"])(
    "answers %s with tool_not_enabled before looking at its parameters",
    async (suffix) => {
      const s = await t.session({ write: false, terminal: false });
      const body = await agentGet(`${s.r}${suffix}&bogus=1`);
      expect(body).toMatchObject({ ok: false, errorCode: "tool_not_enabled", agentAction: "enable_in_control_plane" });
    },
  );
});
