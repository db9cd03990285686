// The URL grammar end to end: what a GET carries after raw= (and in parameters) is exactly what lands on
// disk, strict parameters answer with structured errors, and the two size limits have their own codes.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentGet, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";

interface Body {
  ok: boolean;
  errorCode?: string;
  repair?: string;
  [key: string]: unknown;
}

describe("URL grammar through the gateway", () => {
  let t: TestBridge;
  let s: AgentSession;
  let n = 0;
  beforeAll(async () => {
    t = await startTestBridge();
    s = await t.session({ write: true, terminal: false });
  });
  afterAll(async () => t.close());

  /** Writes `rawTail` (already in wire form) to a fresh file and returns the bytes that landed. */
  async function writeRaw(rawTail: string): Promise<Buffer> {
    const name = `g${n++}.txt`;
    const body = await agentGet<Body>(`${s.m}/w?path=${name}&raw=${rawTail}`);
    expect(body, JSON.stringify(body)).toMatchObject({ ok: true });
    return fs.readFileSync(path.join(t.projectDir, name));
  }

  it.each([
    ["~n", "\n"],
    ["~r~n", "\r\n"],
    ["~t", "\t"],
    ["~h", "#"],
    ["~p", "%"],
    ["~q", "+"],
    ["~s", " "],
    ["~a", "&"],
    ["~~", "~"],
    ["~u2082", "\u2082"],
    ["~uD83D~uDE00", "😀"],
    ["~u{1F600}", "😀"],
    ["a+b", "a b"],
    ["a%20b", "a b"],
    ["a%2Bb", "a+b"],
    ["%C3%A9", "é"],
    ["x=1&y=2", "x=1&y=2"],
    ['print("hi")?', 'print("hi")?'],
  ])("writes %j as %j", async (wire, expected) => {
    expect((await writeRaw(wire)).toString("utf8")).toBe(expected);
  });

  it.each([
    ["~e9", "~e9"],
    ["~", "~"],
    ["~uD83D", "~uD83D"],
    ["~uDE00", "~uDE00"],
    ["~u12", "~u12"],
    ["~u{110000}", "~u{110000}"],
    ["100%", "100%"],
    ["%zz", "%zz"],
    ["%C3", "%C3"],
    ["%", "%"],
  ])("keeps the malformed %j verbatim", async (wire, expected) => {
    expect((await writeRaw(wire)).toString("utf8")).toBe(expected);
  });

  it("rejects a control parameter after raw= and repairs it by moving it before raw=", async () => {
    const body = await agentGet<Body>(`${s.m}/w?path=misplaced.txt&raw=hello&wait=1000`);
    expect(body).toMatchObject({ ok: false, errorCode: "misplaced_parameter", errorDetail: { parameter: "wait" } });
    expect(body.repair).toBe(`${s.m}/w?path=misplaced.txt&wait=1000&raw=hello`);
    expect(fs.existsSync(path.join(t.projectDir, "misplaced.txt"))).toBe(false);
    expect(await agentGet<Body>(body.repair!)).toMatchObject({ ok: true });
    expect(fs.readFileSync(path.join(t.projectDir, "misplaced.txt"), "utf8")).toBe("hello");
  });

  it("takes the same text as content when the & is written ~a", async () => {
    expect((await writeRaw("hello~await=1000")).toString("utf8")).toBe("hello&wait=1000");
  });

  it("treats &name= that is not a parameter of the route as content", async () => {
    expect((await writeRaw("a&b=c")).toString("utf8")).toBe("a&b=c");
  });

  it.each([
    ["/t?pth=a", "unknown_parameter", "/t?path=a"],
    ["/t?path=a&file=b", "conflicting_parameters", undefined],
    ["/t?path=a&path=b", "conflicting_parameters", undefined],
    ["/t?path=a&raw=x", "unexpected_raw", "/t?path=a"],
    ["/t", "missing_parameter", undefined],
    ["/g?path=.&regex=maybe&raw=x", "invalid_parameter", undefined],
    ["/r?path=a&offset=0", "invalid_parameter", "/r?path=a&offset=1"],
  ])("%s answers %s", async (suffix, code, repair) => {
    const body = await agentGet<Body>(`${s.r}${suffix}`);
    expect(body).toMatchObject({
      ok: false,
      errorCode: code,
      retryable: expect.any(Boolean),
      repairHint: expect.any(String),
    });
    if (repair) expect(body.repair).toBe(`${s.r}${repair}`);
    else expect(body.repair).toBeUndefined();
  });

  it("answers raw_too_long for more than 8 KiB of content and suggests staging", async () => {
    const body = await agentGet<Body>(`${s.m}/w?path=big.txt&raw=${"a".repeat(8 * 1024 + 1)}`);
    expect(body).toMatchObject({
      ok: false,
      errorCode: "raw_too_long",
      agentAction: "stage_content",
      errorDetail: { bytes: 8193, limit: 8192 },
    });
    expect(fs.existsSync(path.join(t.projectDir, "big.txt"))).toBe(false);
    await writeRaw("a".repeat(8 * 1024));
  });

  it("answers request_target_too_long past 12 KiB, before looking at the route", async () => {
    const res = await fetch(`${s.r}/t?path=${"a".repeat(12 * 1024)}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      ok: false,
      errorCode: "request_target_too_long",
      agentAction: "stage_content",
    });
  });

  it("still answers an unknown token with the opaque 404 when the target is too long", async () => {
    const res = await fetch(`${t.bridge.dataUrl}/v0/ZZZZZZZZ/t?path=${"a".repeat(13 * 1024)}`);
    expect(res.status).toBe(404);
  });
});
