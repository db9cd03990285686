import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool } from "../../../server/kernel/tool/definition.js";
import { RANGE_PART_BYTES } from "../../../server/url-grammar/range-replay.js";
import { agentGet, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";

// A test-only read tool whose response is as large as asked, mixing 1-, 2-, 3- and 4-byte UTF-8 characters,
// so the real gateway's snapshot and range code is exercised on a 100 KiB body.
const bulkTool = defineTool({
  id: "bulk_test",
  route: "bulk",
  longRoutes: [],
  capability: "read",
  description: "test only",
  example: "/bulk?kib=100",
  schema: z.object({ kib: z.number().int().min(1).max(200) }),
  output: z.strictObject({ ok: z.literal(true), text: z.string() }),
  url: {},
  async execute(args) {
    const unit = "aé€😀 line\n";
    let text = "";
    while (Buffer.byteLength(text, "utf8") < args.kib * 1024) text += unit;
    return { ok: true, text };
  },
});

interface RangeMeta {
  id: string;
  part?: number;
  parts?: number;
  offset: number;
  length: number;
  total: number;
  hasMore: boolean;
  next?: string;
}

function splitRange(body: string): { meta: RangeMeta; chunk: string } {
  const nl = body.indexOf("\n");
  expect(body.startsWith("URLBRIDGE_RANGE ")).toBe(true);
  return { meta: JSON.parse(body.slice("URLBRIDGE_RANGE ".length, nl)) as RangeMeta, chunk: body.slice(nl + 1) };
}

describe("response range replay", () => {
  let t: TestBridge;
  let s: AgentSession;
  beforeAll(async () => {
    t = await startTestBridge({}, { extraTools: [bulkTool] });
    s = await t.session();
  });
  afterAll(async () => t.close());

  it("reconstructs a 100 KiB response byte-exactly from /z parts", async () => {
    const original = await (await fetch(`${s.r}/bulk?kib=100`)).text();
    const parsed = JSON.parse(original) as { rangeFallback: { id: string; first: string }; ok: boolean };
    expect(Object.keys(parsed)[0]).toBe("rangeFallback");
    expect(parsed.rangeFallback.first).toBe(`${s.r}/z?id=${parsed.rangeFallback.id}&part=0`);

    let url: string | undefined = parsed.rangeFallback.first;
    const chunks: Buffer[] = [];
    let parts = 0;
    while (url) {
      const res = await fetch(url);
      expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
      const { meta, chunk } = splitRange(await res.text());
      expect(meta.length).toBeLessThanOrEqual(RANGE_PART_BYTES);
      expect(Buffer.byteLength(chunk, "utf8")).toBe(meta.length);
      chunks.push(Buffer.from(chunk, "utf8"));
      parts += 1;
      url = meta.hasMore ? meta.next : undefined;
    }
    expect(Buffer.concat(chunks).equals(Buffer.from(original, "utf8"))).toBe(true);
    expect(parts).toBeGreaterThan(40);
  });

  it("serves last=1 for the newest response, and range reads do not move that pointer", async () => {
    const original = await (await fetch(`${s.r}/bulk?kib=3`)).text();
    const first = splitRange(await (await fetch(`${s.r}/z?last=1&part=0`)).text());
    const again = splitRange(await (await fetch(`${s.r}/z?last=1&part=0`)).text());
    expect(again.meta.id).toBe(first.meta.id);
    expect(original.startsWith(first.chunk)).toBe(true);
  });

  it("corrects offset/length windows to UTF-8 character boundaries", async () => {
    const original = Buffer.from(await (await fetch(`${s.r}/bulk?kib=4`)).text(), "utf8");
    const id = (JSON.parse(original.toString("utf8")) as { rangeFallback: { id: string } }).rangeFallback.id;
    const rebuilt: Buffer[] = [];
    let offset = 0;
    while (offset < original.length) {
      const { meta, chunk } = splitRange(await (await fetch(`${s.r}/z?id=${id}&offset=${offset}&length=333`)).text());
      expect(meta.offset).toBe(offset);
      rebuilt.push(Buffer.from(chunk, "utf8"));
      offset = meta.offset + meta.length;
    }
    expect(Buffer.concat(rebuilt).equals(original)).toBe(true);
    // an offset in the middle of a multi-byte character moves back to its start
    const mid = original.indexOf(Buffer.from("😀", "utf8")) + 2;
    const { meta } = splitRange(await (await fetch(`${s.r}/z?id=${id}&offset=${mid}&length=10`)).text());
    expect(meta.offset).toBe(mid - 2);
  });

  it.each([
    ["/z", "missing_parameter"],
    ["/z?last=1&id=abc", "conflicting_parameters"],
    ["/z?last=1&part=0&offset=0&length=10", "conflicting_parameters"],
    // offset alone is a resume (one part's worth from there); length alone says nothing about where.
    ["/z?last=1&length=5", "missing_parameter"],
    ["/z?id=nope&part=0", "snapshot_not_found"],
    ["/z?last=1&part=99999", "range_out_of_bounds"],
    ["/z?last=yes", "invalid_parameter"],
  ])("%s answers %s", async (suffix, code) => {
    await fetch(`${s.r}/bulk?kib=1`);
    const body = await (await fetch(`${s.r}${suffix}`)).json();
    expect(body).toMatchObject({ ok: false, errorCode: code });
  });

  it("keeps snapshots per session", async () => {
    const other = await t.session();
    const res = await (await fetch(`${s.r}/bulk?kib=3`)).json();
    const id = (res as { rangeFallback: { id: string } }).rangeFallback.id;
    const body = await agentGet(`${other.r}/z?id=${id}&part=0`);
    expect(body).toMatchObject({ ok: false, errorCode: "snapshot_not_found" });
  });
  it("resumes from the bytes a truncating reader already holds, through rangeFallback.resume", async () => {
    const original = Buffer.from(await (await fetch(`${s.r}/bulk?kib=16`)).arrayBuffer());
    const { rangeFallback } = JSON.parse(original.toString("utf8")) as {
      rangeFallback: { id: string; resume: string };
    };
    expect(rangeFallback.resume).toBe(`${s.r}/z?id=${rangeFallback.id}&offset=`);
    const held = 3 * 1024; // what a ~3 KiB reader showed
    const chunks: Buffer[] = [original.subarray(0, held)];
    let url: string | undefined = `${rangeFallback.resume}${held}`;
    let gets = 0;
    while (url && gets < 50) {
      gets += 1;
      const { meta, chunk } = splitRange(await (await fetch(url)).text());
      const start = chunks.reduce((n, c) => n + c.length, 0);
      // An offset inside a character moves back to its start: drop what is already held.
      chunks.push(Buffer.from(chunk, "utf8").subarray(start - meta.offset));
      expect(meta.length).toBeLessThanOrEqual(RANGE_PART_BYTES);
      url = meta.next;
    }
    expect(Buffer.concat(chunks).equals(original)).toBe(true);
    // 16 KiB in 2,304-byte parts from 3 KiB on: 6 GETs, not the 8 that part=0 onwards takes.
    expect(gets).toBe(Math.ceil((original.length - held) / RANGE_PART_BYTES));
  });

  it("never lets a failed range read replace the last=1 pointer", async () => {
    const original = await (await fetch(`${s.r}/bulk?kib=8`)).text();
    const failed = (await (await fetch(`${s.r}/z?last=1&part=999`)).json()) as { ok: boolean; errorCode: string };
    expect(failed).toMatchObject({ ok: false, errorCode: "range_out_of_bounds" });
    const bad = (await (await fetch(`${s.r}/z?last=1&colour=red`)).json()) as { ok: boolean };
    expect(bad.ok).toBe(false);
    const { meta, chunk } = splitRange(await (await fetch(`${s.r}/z?last=1&part=0`)).text());
    expect(meta.total).toBe(Buffer.byteLength(original, "utf8"));
    expect(original.startsWith(chunk)).toBe(true);
  });
});
