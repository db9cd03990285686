// The 2025-era HTTP leg's direct tools/call path (server/mcp/http-direct-call.ts) attacked as the s24 safety review
// did the socket's: a call the capability does not list, sent in exactly the shape the direct path admits, on the
// read capability and on a mutation capability whose project has just lost the permission (its direct tools are
// cached per listing, so a stale listing must not run it), by URL and by Bearer. Nothing may run that the same call
// would not run through the SDK's dispatch.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";
import { toolCall as call } from "../../helpers/mcp-direct-cases.js";

const LEGACY_HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": "2025-06-18",
};
type Answer = {
  result?: { isError?: boolean; structuredContent?: { ok?: boolean; errorCode?: string } };
  error?: { code: number };
};

describe("the HTTP leg's direct tools/call path under attack", () => {
  let t: TestBridge;
  let s: AgentSession;
  const post = async (target: string, message: unknown, headers: Record<string, string> = LEGACY_HEADERS) =>
    (await (await fetch(target, { method: "POST", headers, body: JSON.stringify(message) })).json()) as Answer;
  const refused = (answer: Answer) => answer.error !== undefined || answer.result?.isError === true;

  beforeAll(async () => {
    t = await startTestBridge();
    s = await t.session({ write: true, terminal: true, name: "http-attacks" });
    fs.writeFileSync(path.join(t.projectDir, "notes.txt"), "alpha\n");
  });
  afterAll(async () => t.close());

  it.each([
    ["write", { path: "planted.txt", content: "x\n" }],
    ["edit", { path: "notes.txt", oldString: "alpha", newString: "omega" }],
    ["shell", { command: "touch planted.txt" }],
  ])("runs no %s on the read capability, by URL or by Bearer", async (tool, args) => {
    expect(refused(await post(`${s.r}/mcp`, call(1, tool, args)))).toBe(true);
    const token = s.r.split("/").pop()!;
    const origin = new URL(s.r).origin;
    expect(
      refused(
        await post(`${origin}/mcp`, call(2, tool, args), { ...LEGACY_HEADERS, authorization: `Bearer ${token}` }),
      ),
    ).toBe(true);
    expect(fs.existsSync(path.join(t.projectDir, "planted.txt"))).toBe(false);
    expect(fs.readFileSync(path.join(t.projectDir, "notes.txt"), "utf8")).toBe("alpha\n");
  });

  it("runs no write once the project lost the permission, after the direct path served the old listing", async () => {
    const first = await post(`${s.m}/mcp`, call(3, "write", { path: "before.txt", content: "x\n" }));
    expect(first.result?.structuredContent?.ok).toBe(true);
    expect(
      (await t.api("PATCH", `/api/projects/${s.projectId}`, { permissions: { write: false, terminal: true } })).status,
    ).toBe(200);
    const view = (await t.api<{ bearer: string }>("GET", `/api/sessions/${s.sessionId}/mcp`)).body;
    const origin = new URL(s.m!).origin;
    const after = await post(`${origin}/mcp`, call(4, "write", { path: "after.txt", content: "x\n" }), {
      ...LEGACY_HEADERS,
      authorization: `Bearer ${view.bearer}`,
    });
    expect(refused(after)).toBe(true);
    expect(fs.existsSync(path.join(t.projectDir, "after.txt"))).toBe(false);
  });
});
