// JSON written from UTF-8 bytes (server/text/json-escape.ts, utf8-json.ts): byte for byte what JSON.stringify
// writes for the decoded text, for every byte a text can hold, sparse or dense in escapes, at any alignment.
import { describe, expect, it } from "vitest";
import { planJsonEscape } from "../../../server/text/json-escape.js";
import {
  jsonOfUtf8,
  MIN_SPLICED_BYTES,
  noteUtf8Sources,
  stringifyUtf8Sources,
  utf8SourcesOf,
  writeJsonPieces,
} from "../../../server/text/utf8-json.js";

/** A seeded generator of code points: mostly plain ASCII, with `escapeShare` of them ones JSON escapes. */
function seededText(seed: number, length: number, escapeShare: number): string {
  let state = seed;
  const random = () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const special = () => {
    const kinds = [
      () => Math.floor(random() * 0x20), // every control character, \u0000 to \u001f
      () => 0x22, // "
      () => 0x5c, // \
      () => 0x7f, // DEL
      () => 0x2028, // LINE SEPARATOR
      () => 0x2029, // PARAGRAPH SEPARATOR
      () => 0x80 + Math.floor(random() * 0x780), // two bytes in UTF-8
      () => 0x800 + Math.floor(random() * 0xd000), // three bytes, below the surrogates
      () => 0xe000 + Math.floor(random() * 0x2000), // three bytes, above them (U+FFFD, U+FEFF included)
      () => 0x10000 + Math.floor(random() * 0xfffff), // four bytes (astral)
    ];
    return kinds[Math.floor(random() * kinds.length)]!();
  };
  const points: number[] = [];
  for (let i = 0; i < length; i++) points.push(random() < escapeShare ? special() : 0x20 + Math.floor(random() * 0x5f));
  return String.fromCodePoint(...points);
}

/** The bytes a plan writes, at an unaligned offset of a larger buffer. */
function written(plan: { size: number; write(out: Buffer, at: number): number }): Buffer {
  const out = Buffer.alloc(plan.size + 10, 0xaa);
  const end = plan.write(out, 3);
  expect(end - 3).toBe(plan.size);
  return out.subarray(3, end);
}

/** `text`'s UTF-8 bytes at `shift` bytes into a larger buffer, so the escaper meets every alignment. */
function shifted(text: string, shift: number): Buffer {
  const bytes = Buffer.from(text, "utf8");
  const host = Buffer.alloc(bytes.length + 8, 0x22);
  bytes.copy(host, shift);
  return host.subarray(shift, shift + bytes.length);
}

describe("JSON from UTF-8 bytes", () => {
  it("escapes every character below U+0080 as JSON.stringify does, alone and between others", () => {
    for (let c = 0; c < 0x80; c++) {
      for (const text of [String.fromCharCode(c), `ab${String.fromCharCode(c)}cdefgh`, `é${String.fromCharCode(c)}`]) {
        expect(written(planJsonEscape(Buffer.from(text, "utf8"), 0)!).toString("utf8")).toBe(JSON.stringify(text));
      }
    }
  });

  it.each([
    ["sparse escapes", 0.01],
    ["some escapes", 0.05],
    ["dense escapes", 0.5],
    ["nothing but escapes and non-ASCII", 1],
  ])("matches JSON.stringify over seeded texts with %s, at every alignment", (_, share) => {
    for (let seed = 1; seed <= 40; seed++) {
      const text = seededText(seed, 1 + ((seed * 997) % 3000), share);
      const expected = Buffer.from(JSON.stringify(text), "utf8");
      for (let shift = 0; shift < 4; shift++) {
        const bytes = shifted(text, shift);
        expect(written(planJsonEscape(bytes, 0)!).equals(expected)).toBe(true);
        // As the writer calls it: planned only where escapes are sparse, and then exact.
        const planned = jsonOfUtf8(bytes);
        if (planned !== undefined) expect(written(planned).equals(expected)).toBe(true);
      }
    }
  });

  it("plans sparse text and gives up early on text denser in escapes than one per 20 bytes", () => {
    expect(planJsonEscape(Buffer.from(`${"x".repeat(79)}\n`.repeat(100)))).toBeDefined();
    expect(planJsonEscape(Buffer.from(`${"x".repeat(18)}\n`.repeat(100)))).toBeDefined();
    expect(planJsonEscape(Buffer.from('\t"a"\n'.repeat(100)))).toBeUndefined();
    expect(planJsonEscape(Buffer.from(`${"x".repeat(12)}\n`.repeat(100)))).toBeUndefined();
  });

  it.each([
    ["a lone continuation byte", [0x61, 0x80, 0x62]],
    ["a truncated sequence", [0x61, 0xe2, 0x82]],
    ["an encoded surrogate", [0xed, 0xa0, 0x80]],
    ["an overlong encoding", [0xc0, 0xaf]],
    ["Latin-1", [0x63, 0x61, 0x66, 0xe9]],
  ])("refuses bytes that are not valid UTF-8: %s", (_, bytes) => {
    expect(jsonOfUtf8(Buffer.from(bytes))).toBeUndefined();
  });

  /** A page of `bytes` bytes or more with an escape every ~40 bytes, non-ASCII included. */
  const page = (line: string, bytes: number) => line.repeat(Math.ceil(bytes / Buffer.byteLength(line)));

  it("writes a result's noted strings from their bytes, the rest as JSON.stringify does", () => {
    const pages = [
      page('first "page" of € and 😀, of plain words, and of more plain words to keep escapes sparse\n', 20_000),
      page("second\tpage\u2028 with more words, as many as a line of a log has\n", 9000),
    ];
    const entries = pages.map((content) => ({ path: "/project/ü.txt", content, next: "http://x/r?path=a" }));
    const result = { ok: true, files: entries, notice: "größe" };
    const sources = entries.map((entry) => ({ holder: entry, key: "content", bytes: Buffer.from(entry.content) }));
    noteUtf8Sources(result, sources);
    expect(utf8SourcesOf(result)).toBe(sources);
    expect(utf8SourcesOf({ ...result })).toBeUndefined();
    expect(JSON.stringify(result)).not.toContain("utf8Sources");
    const pieces = stringifyUtf8Sources(result, sources)!;
    const expected = Buffer.from(JSON.stringify(result), "utf8");
    expect(pieces.size).toBe(expected.length);
    expect(writeJsonPieces(pieces, Buffer.alloc(0), 0).equals(expected)).toBe(true);
    const head = Buffer.from('{"front":1,');
    expect(writeJsonPieces(pieces, head, 1).equals(Buffer.concat([head, expected.subarray(1)]))).toBe(true);
  });

  const plain = page("plain words of a log line, then a newline\n", MIN_SPLICED_BYTES);
  it.each([
    ["strings under MIN_SPLICED_BYTES together", "entry", "content", Buffer.from("x".repeat(MIN_SPLICED_BYTES - 1))],
    ["bytes dense in escapes", "entry", "content", Buffer.from('"a"\n'.repeat(MIN_SPLICED_BYTES))],
    ["bytes that are not valid UTF-8", "entry", "content", Buffer.concat([Buffer.from(plain), Buffer.from([0xff])])],
    ["a holder the result does not hold", "other", "content", Buffer.from(plain)],
    ["a key the holder has no string under", "entry", "missing", Buffer.from(plain)],
  ])("leaves the whole result to JSON.stringify given %s", (_, holderName, key, bytes) => {
    const entry = { content: bytes.toString("utf8") };
    const holder = holderName === "entry" ? entry : { content: entry.content };
    expect(stringifyUtf8Sources({ files: [entry] }, [{ holder, key, bytes }])).toBeUndefined();
  });
});
