import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ActivityEntry } from "../../../server/store/activity.js";
import { agentGet, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";

describe("activity log", () => {
  let t: TestBridge;
  let s: AgentSession;
  let other: AgentSession;
  beforeAll(async () => {
    t = await startTestBridge();
    s = await t.session();
    other = await t.session();
  });
  afterAll(async () => t.close());

  it("records every authenticated call with route, outcome and timing, per session", async () => {
    await agentGet(`${s.r}/t?path=.`);
    await agentGet(`${s.r}/t?nope=1`);
    await agentGet(`${other.r}/t?path=.`);
    await fetch(`${t.bridge.dataUrl}/v0/ZZZZZZZZ/t?path=.`);
    const { body } = await t.api<ActivityEntry[]>("GET", `/api/activity?sessionId=${s.sessionId}`);
    expect(body.map((e) => [e.route, e.ok, e.errorCode])).toEqual([
      ["/t", false, "unknown_parameter"],
      ["/t", true, null],
      ["init", true, null],
    ]);
    for (const e of body) {
      expect(e.sessionId).toBe(s.sessionId);
      expect(e.durationMs).toBeGreaterThanOrEqual(0);
      expect(e.httpStatus).toBe(200);
    }
    const all = await t.api<ActivityEntry[]>("GET", "/api/activity");
    expect(all.body.some((e) => e.sessionId === other.sessionId)).toBe(true);
  });

  it("never stores content and redacts secret-looking values", async () => {
    const secret = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
    await agentGet(`${s.r}/t?path=${secret}`);
    await agentGet(`${s.r}/t?path=a.txt&token=hunter2hunter2`);
    await agentGet(`${s.r}/t?path=a.txt&raw=some-private-content`);
    const { body } = await t.api<ActivityEntry[]>("GET", `/api/activity?sessionId=${s.sessionId}&limit=3`);
    const text = JSON.stringify(body);
    expect(text).not.toContain(secret);
    expect(text).not.toContain("hunter2");
    expect(text).not.toContain("some-private-content");
    expect(body[0]!.params).toMatchObject({ raw: "<20 bytes>" });
    expect(body[1]!.params).toMatchObject({ token: "<redacted>", path: "a.txt" });
    expect(body[2]!.params).toMatchObject({ path: "<redacted>" });
  });

  it("pages forward with after=", async () => {
    const first = await t.api<ActivityEntry[]>("GET", "/api/activity?limit=1");
    const newest = first.body[0]!.id;
    await agentGet(`${s.r}/t?path=.`);
    const next = await t.api<ActivityEntry[]>("GET", `/api/activity?after=${newest}`);
    expect(next.body).toHaveLength(1);
    expect(next.body[0]!.id).toBeGreaterThan(newest);
  });
});
