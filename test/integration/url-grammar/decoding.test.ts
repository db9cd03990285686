// Decoding from evidence, end to end: text a standard encoder wrote once lands on disk byte for byte, a
// proxy's extra layers are still undone, and wherever the reading was ambiguous the answer carries a
// `decoding` notice whose other reading, fetched exactly as returned, gives the other content.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentGet, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";

interface Notice {
  percentLayers: number;
  plus: "space" | "plus";
  tilde?: "escapes" | "literal";
  hint: string;
  otherReadings: Array<{ reading: string; url: string }>;
  thisReading?: { reading: string; url: string };
}
interface Body {
  ok: boolean;
  errorCode?: string;
  repair?: string;
  decoding?: Notice;
  [key: string]: unknown;
}

/** What a proxy that encodes the whole target again does to the % of every escape. */
const again = (wire: string) => wire.replace(/%/g, "%25");

describe("decoding from evidence", () => {
  let t: TestBridge;
  let s: AgentSession;
  let n = 0;
  beforeAll(async () => {
    t = await startTestBridge();
    s = await t.session({ write: true, terminal: false });
  });
  afterAll(async () => t.close());

  const fresh = () => `d${n++}.txt`;
  const onDisk = (name: string) => fs.readFileSync(path.join(t.projectDir, name), "utf8");

  it.each([
    'printf("%02x %20s")',
    't = "%02d:%2d"',
    "%02d:%2d",
    "see %41 and %2F in the docs",
    'curl -s "https://example.com/search?q=a%20b&x=%2F"',
    "line 1\nvalue = 100%25\n",
  ])("writes encodeURIComponent(%j) byte for byte, with no decoding notice", async (text) => {
    const name = fresh();
    const body = await agentGet<Body>(`${s.m}/w?path=${name}&raw=${encodeURIComponent(text)}`);
    expect(body, JSON.stringify(body)).toMatchObject({ ok: true });
    expect(body.decoding).toBeUndefined();
    expect(onDisk(name)).toBe(text);
  });

  it.each([1, 2])("still undoes %i layer(s) a proxy added, and says so", async (extra) => {
    const text = 'say "hi" to %02d';
    let wire = encodeURIComponent(text);
    for (let i = 0; i < extra; i++) wire = again(wire);
    const name = fresh();
    const body = await agentGet<Body>(`${s.m}/w?path=${name}&raw=${wire}`);
    expect(body, JSON.stringify(body)).toMatchObject({
      ok: true,
      decoding: { percentLayers: 1 + extra, plus: "plus" },
    });
    expect(onDisk(name)).toBe(text);
  });

  it("answers an evidence-free double escape with the other reading, which writes the literal text when fetched", async () => {
    const name = fresh();
    const body = await agentGet<Body>(`${s.m}/w?path=${name}&raw=${encodeURIComponent("%20")}`);
    expect(body).toMatchObject({ ok: true, decoding: { percentLayers: 2 } });
    expect(onDisk(name)).toBe(" ");
    const other = body.decoding!.otherReadings.find((r) => r.reading === "1 percent layer")!;
    expect(other.url).toContain("raw=~p20");
    await agentGet(`${s.r}/r?path=${name}`); // overwriting a file needs a read of it first (stale_read)
    const again = await agentGet<Body>(other.url);
    expect(again, JSON.stringify(again)).toMatchObject({ ok: true });
    expect(again.decoding).toBeUndefined();
    expect(onDisk(name)).toBe("%20");
  });

  it("reads + as a plus when the target carries its spaces as %20, and offers the space reading", async () => {
    const name = fresh();
    const body = await agentGet<Body>(`${s.m}/w?path=${name}&raw=x+y%20z`);
    expect(body).toMatchObject({ ok: true, decoding: { percentLayers: 1, plus: "plus" } });
    expect(onDisk(name)).toBe("x+y z");
    const other = body.decoding!.otherReadings.find((r) => r.reading === "+ as a space")!;
    await agentGet(`${s.r}/r?path=${name}`);
    expect(await agentGet<Body>(other.url)).toMatchObject({ ok: true });
    expect(onDisk(name)).toBe("x y z");
  });

  it("reads + as a space otherwise, says so, and the other reading writes the plus", async () => {
    const name = fresh();
    const body = await agentGet<Body>(`${s.m}/w?path=${name}&raw=C++`);
    expect(body).toMatchObject({ ok: true, decoding: { percentLayers: 0, plus: "space" } });
    expect(onDisk(name)).toBe("C  ");
    const other = body.decoding!.otherReadings.find((r) => r.reading === "+ as a plus")!;
    await agentGet(`${s.r}/r?path=${name}`);
    expect(await agentGet<Body>(other.url)).toMatchObject({ ok: true });
    expect(onDisk(name)).toBe("C++");
  });

  it("searches a regex typed with + beside %20 spaces as written", async () => {
    fs.writeFileSync(path.join(t.projectDir, "code.py"), "def scan(x):\n    return  (x)\n");
    const body = await agentGet<Body & { matchedLines?: number }>(`${s.r}/g?regex=1&pattern=def%20\\w+\\(`);
    expect(body, JSON.stringify(body)).toMatchObject({ ok: true, regex: true });
    expect(JSON.stringify(body)).toContain("def scan(x):");
  });

  it("writes the issue 27 repro as typed: its encoded newline shows the agent encoded it, so its ~ are text", async () => {
    const name = fresh();
    const body = await agentGet<Body>(`${s.m}/w?path=${name}&raw=mask%20%3D%20~np.isnan(x)%0Aflag%20%3D%20~~value`);
    expect(body, JSON.stringify(body)).toMatchObject({ ok: true });
    expect(body.decoding).toBeUndefined();
    expect(onDisk(name)).toBe("mask = ~np.isnan(x)\nflag = ~~value");
  });

  it("names both ~ readings of an undecidable target, each URL declared, and the other one writes the literal text", async () => {
    const name = fresh();
    const body = await agentGet<Body>(`${s.m}/w?path=${name}&call=tilde-1&raw=~~x~~`);
    expect(body, JSON.stringify(body)).toMatchObject({ ok: true, decoding: { tilde: "escapes" } });
    expect(onDisk(name)).toBe("~x~");
    expect(body.decoding!.thisReading!.url).toBe(`${s.m}/w?path=${name}&enc=tilde&raw=~~x~~`);
    const other = body.decoding!.otherReadings.find((r) => r.reading === "~ as literal text (enc=pct)")!;
    expect(other.url).toBe(`${s.m}/w?path=${name}&enc=pct&raw=~~x~~`);
    await agentGet(`${s.r}/r?path=${name}`);
    const again = await agentGet<Body>(other.url);
    expect(again, JSON.stringify(again)).toMatchObject({ ok: true });
    expect(again.decoding).toBeUndefined();
    expect(onDisk(name)).toBe("~~x~~");
  });

  it("refuses an enc= that declares nothing, before running anything", async () => {
    const name = fresh();
    const body = await agentGet<Body>(`${s.m}/w?path=${name}&enc=utf8&raw=~n`);
    expect(body).toMatchObject({ ok: false, errorCode: "invalid_parameter" });
    expect(fs.existsSync(path.join(t.projectDir, name))).toBe(false);
  });

  it("keeps the declaration in a repair URL, which writes the declared reading when followed", async () => {
    const name = fresh();
    const body = await agentGet<Body>(`${s.m}/w?enc=pct&file_path=${name}&raw=~np`);
    expect(body).toMatchObject({ ok: false, errorCode: "unknown_parameter" });
    expect(body.repair).toContain("enc=pct");
    expect(await agentGet<Body>(body.repair!)).toMatchObject({ ok: true });
    expect(onDisk(name)).toBe("~np");
  });

  it("refuses an enc= placed after raw= as a misplaced parameter", async () => {
    const body = await agentGet<Body>(`${s.m}/w?path=${fresh()}&raw=~np&enc=pct`);
    expect(body).toMatchObject({ ok: false, errorCode: "misplaced_parameter" });
    expect(body.repair).toMatch(/&enc=pct&raw=~np$/);
  });

  it("keeps the notice on a replay of the same URL, and leaves call= out of the other reading", async () => {
    const name = fresh();
    const url = `${s.m}/w?path=${name}&call=dec-replay-1&raw=a+b`;
    const first = await agentGet<Body>(url);
    const replay = await agentGet<Body>(url);
    expect(first.decoding).toBeDefined();
    expect(replay).toMatchObject({ dedupe: "replayed", decoding: first.decoding });
    expect(first.decoding!.otherReadings[0]!.url).not.toContain("call=");
  });
});
