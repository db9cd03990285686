// Names the bridge refuses to create, and failed creations that leave nothing behind.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentGet, startTestBridge, type AgentSession, type TestBridge, writeAsAgent } from "../../helpers/bridge.js";
import { patchText, url } from "./fixtures.js";

type Body = Record<string, unknown> & { ok: boolean; errorCode?: string };

describe("input hygiene on create", () => {
  let t: TestBridge;
  let s: AgentSession;
  beforeAll(async () => {
    t = await startTestBridge();
    writeAsAgent(path.join(t.projectDir, "tab\there.txt"), "existing\n");
    s = await t.session({ write: true });
  });
  afterAll(async () => t.close());

  it.each([
    ["a newline", "new\nline.txt"],
    ["a tab", "dir\twith/tab.txt"],
    ["a carriage return", "cr\r.txt"],
    ["DEL", "del\u007f.txt"],
    ["an escape character", "esc\u001b[31m.txt"],
  ])("refuses to create a name with %s, creating nothing", async (_name, rel) => {
    const before = fs.readdirSync(t.projectDir).sort();
    const body = await agentGet<Body>(url(s.m!, "w", [["path", rel]], "x\n"));
    expect(body).toMatchObject({ ok: false, errorCode: "invalid_path", retryable: false });
    expect(String(body.repairHint)).toMatch(/control character/);
    const patch = await agentGet<Body>(url(s.m!, "a", [], patchText(`*** Add File: ${rel}`, "+x")));
    expect(patch).toMatchObject({ ok: false });
    expect(fs.readdirSync(t.projectDir).sort()).toEqual(before);
  });

  it("keeps an existing name with a control character readable and deletable, and a missing one is just not found", async () => {
    expect(await agentGet<Body>(url(s.r, "r", [["path", "tab\there.txt"]]))).toMatchObject({ ok: true });
    expect(await agentGet<Body>(url(s.r, "r", [["path", "no\tsuch.txt"]]))).toMatchObject({
      ok: false,
      errorCode: "path_not_found",
    });
    writeAsAgent(path.join(t.projectDir, "old\tname.txt"), "gone soon\n");
    expect(await agentGet<Body>(url(s.m!, "a", [], patchText("*** Delete File: old\tname.txt")))).toMatchObject({
      ok: true,
    });
    expect(fs.existsSync(path.join(t.projectDir, "old\tname.txt"))).toBe(false);
  });

  it("refuses a 3,000-level /w whose host path would pass PATH_MAX before creating any directory", async () => {
    const deep = `${Array.from({ length: 3000 }, () => "d").join("/")}/f.txt`;
    const body = await agentGet<Body>(url(s.m!, "w", [["path", deep]], "x\n"));
    expect(body).toMatchObject({ ok: false, errorCode: "invalid_path", errorDetail: { limitBytes: 4095 } });
    expect(fs.existsSync(path.join(t.projectDir, "d"))).toBe(false);
    // A deep path that fits is created as usual.
    const fits = `${Array.from({ length: 100 }, () => "d").join("/")}/f.txt`;
    expect(await agentGet<Body>(url(s.m!, "w", [["path", fits]], "x\n"))).toMatchObject({ ok: true, created: true });
  });
});
