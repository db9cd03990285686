// The bytes of an agent's JSON answer (gateway/respond.ts serializeAgentJson): exactly the UTF-8 of the JSON text,
// whether it is ASCII only (copied as Latin-1) or not, with the rangeFallback spliced in front of a large one.
import { describe, expect, it } from "vitest";
import { serializeAgentJson } from "../../../server/gateway/respond.js";
import { SessionState } from "../../../server/kernel/tool/session-state.js";
import { RANGE_PART_BYTES } from "../../../server/url-grammar/range-replay.js";
import { MIN_SPLICED_BYTES, noteUtf8Sources, stringifyUtf8Sources } from "../../../server/text/utf8-json.js";

const BASE = "http://127.0.0.1:1/v0/cap";
const large = (text: string) => text.repeat(Math.ceil((2 * RANGE_PART_BYTES) / text.length));

describe("an agent's JSON answer as bytes", () => {
  it.each([
    ["ASCII", "plain text\n"],
    ["two-byte characters", "größe 5 €\n"],
    ["astral characters", "a 😀 b\n"],
    ["a lone surrogate", "x\ud800y\n"],
    ["control characters and quotes", 'tab\t"quote"\\\u0001\n'],
  ])("is the UTF-8 of the JSON text, small or large: %s", (_, text) => {
    const state = new SessionState();
    const small = serializeAgentJson(state, { ok: true, text }, BASE);
    expect(small.bytes.equals(Buffer.from(JSON.stringify({ ok: true, text }), "utf8"))).toBe(true);
    const body = { ok: true, text: large(text) };
    const { id, bytes } = serializeAgentJson(state, body, BASE);
    const fallback = { id, first: `${BASE}/z?id=${id}&part=0`, resume: `${BASE}/z?id=${id}&offset=` };
    const expected = `{"rangeFallback":${JSON.stringify(fallback)},${JSON.stringify(body).slice(1)}`;
    expect(bytes.equals(Buffer.from(expected, "utf8"))).toBe(true);
    expect(JSON.parse(bytes.toString("utf8"))).toEqual({ rangeFallback: fallback, ...body });
  });

  it("puts the fallback in front of an answer short in characters but over one range part in bytes", () => {
    const body = { ok: true, text: "€".repeat(Math.ceil(RANGE_PART_BYTES / 3) + 10) };
    expect(JSON.stringify(body).length).toBeLessThan(RANGE_PART_BYTES);
    const { bytes } = serializeAgentJson(new SessionState(), body, BASE);
    expect(bytes.subarray(0, 17).toString("utf8")).toBe('{"rangeFallback":');
  });

  it.each([
    ["ASCII", "a log line of plain words, as most are\n"],
    ["non-ASCII and escapes", 'größe "5" € and 😀\u2028, among plain words, as many as a line of a log has\n'],
  ])("writes a read's pages from their bytes as the very bytes of the JSON text: %s", (_, line) => {
    for (const content of [line, line.repeat(Math.ceil((MIN_SPLICED_BYTES + RANGE_PART_BYTES) / line.length))]) {
      const entry = { path: "/project/a.log", content, next: `${BASE}/r?path=a.log` };
      const body = { ok: true, files: [entry] };
      const sources = [{ holder: entry, key: "content", bytes: Buffer.from(content, "utf8") }];
      noteUtf8Sources(body, sources);
      // The large page is written from its bytes, the small one is not.
      expect(stringifyUtf8Sources(body, sources) !== undefined).toBe(content.length > line.length);
      const { id, bytes } = serializeAgentJson(new SessionState(), body, BASE);
      const fallback = { id, first: `${BASE}/z?id=${id}&part=0`, resume: `${BASE}/z?id=${id}&offset=` };
      const json = JSON.stringify(body);
      const expected =
        Buffer.byteLength(json) <= RANGE_PART_BYTES
          ? json
          : `{"rangeFallback":${JSON.stringify(fallback)},${json.slice(1)}`;
      expect(bytes.equals(Buffer.from(expected, "utf8"))).toBe(true);
    }
  });
});
