// The older generic endpoint, /call?tool=<id>&content=<base64url(JSON)> (alias /tool): strict, absent from
// Init, and answering exactly what the tool's own route answers, because what runs is that route's URL.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentGet, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";

interface Body {
  ok: boolean;
  errorCode?: string;
  errorDetail?: Record<string, unknown>;
  [key: string]: unknown;
}

const b64 = (value: unknown) =>
  Buffer.from(typeof value === "string" ? value : JSON.stringify(value), "utf8").toString("base64url");
/** Answers minus what differs between any two calls (ids of snapshots, timings). */
const comparable = (body: Body) =>
  JSON.parse(
    JSON.stringify(body, (k, v) => (k === "rangeFallback" || k === "elapsedMs" || k === "durationMs" ? undefined : v)),
  );

describe("/call compatibility endpoint", () => {
  let t: TestBridge;
  let s: AgentSession;
  beforeAll(async () => {
    t = await startTestBridge();
    fs.writeFileSync(path.join(t.projectDir, "a.txt"), "alpha\nbeta\ngamma\n");
    s = await t.session({ write: true, terminal: false });
  });
  afterAll(async () => t.close());

  it("is not advertised by Init", () => {
    expect(JSON.stringify(s.init)).not.toMatch(/\/call\b|\/tool\b|base64/);
  });

  it("answers a read exactly as /r does, on /call and /tool", async () => {
    const route = await agentGet<Body>(`${s.r}/r?path=a.txt&offset=2&limit=1`);
    for (const name of ["call", "tool"]) {
      const compat = await agentGet<Body>(
        `${s.r}/${name}?tool=read&content=${b64({ path: "a.txt", offset: 2, limit: 1 })}`,
      );
      expect(comparable(compat)).toEqual(comparable(route));
    }
  });

  it("writes with the content field, byte for byte, and its journal identity is the route's", async () => {
    const text = 'printf("%02x") & ~n + 😀\n';
    const compat = await agentGet<Body>(`${s.m}/call?tool=write&content=${b64({ path: "w.txt", content: text })}`);
    expect(compat, JSON.stringify(compat)).toMatchObject({ ok: true, state: "succeeded" });
    expect(fs.readFileSync(path.join(t.projectDir, "w.txt"), "utf8")).toBe(text);
    const again = await agentGet<Body>(`${s.m}/call?tool=write&content=${b64({ path: "w.txt", content: text })}`);
    expect(again).toMatchObject({ ok: true, dedupe: "replayed", callId: compat.callId });
  });

  it("accepts the tool's aliases and refuses two spellings of one field", async () => {
    expect(await agentGet<Body>(`${s.r}/call?tool=read&content=${b64({ file: "a.txt" })}`)).toMatchObject({ ok: true });
    expect(
      await agentGet<Body>(`${s.r}/call?tool=read&content=${b64({ file: "a.txt", path: "a.txt" })}`),
    ).toMatchObject({ ok: false, errorCode: "conflicting_parameters" });
  });

  it.each([
    ["unknown field", `tool=read&content=${b64({ path: "a.txt", colour: "red" })}`, "unknown_parameter"],
    ["padded base64", `tool=read&content=${Buffer.from('{"path":"a.txt"}').toString("base64")}`, "invalid_parameter"],
    ["non-canonical base64url", `tool=read&content=${b64({ path: "a.txt" }).slice(0, -1)}x`, "invalid_parameter"],
    ["not JSON", `tool=read&content=${b64("path=a.txt")}`, "invalid_parameter"],
    ["a JSON array", `tool=read&content=${b64(["a.txt"])}`, "invalid_parameter"],
    ["a nested object", `tool=read&content=${b64({ path: { x: 1 } })}`, "invalid_parameter"],
    ["unknown tool", `tool=cat&content=${b64({ path: "a.txt" })}`, "invalid_parameter"],
    ["missing content", "tool=read", "missing_parameter"],
    ["a stray parameter", `tool=read&content=${b64({ path: "a.txt" })}&wait=10`, "unknown_parameter"],
  ])("refuses %s", async (_what, query, code) => {
    expect(await agentGet<Body>(`${s.r}/call?${query}`)).toMatchObject({ ok: false, errorCode: code });
  });

  it("keeps the capability split: a mutation tool on the read base answers wrong_capability_base with the route's repair", async () => {
    const body = await agentGet<Body & { repair?: string }>(
      `${s.r}/call?tool=write&content=${b64({ path: "x.txt", content: "x" })}`,
    );
    expect(body).toMatchObject({ ok: false, errorCode: "wrong_capability_base" });
    expect(body.repair).toBe(`${s.m}/w?path=x.txt&raw=x`);
    expect(fs.existsSync(path.join(t.projectDir, "x.txt"))).toBe(false);
  });
});
