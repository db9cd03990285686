import { describe, expect, it } from "vitest";
import { encodeUrlText } from "../../../server/url-grammar/encode.js";
import { parseQuery } from "../../../server/url-grammar/query.js";
import { MAX_RAW_BYTES, MAX_REQUEST_TARGET_BYTES } from "../../../server/url-grammar/limits.js";
import { contentBytesAtMost, stagingPlan } from "../../../server/url-grammar/staging-advice.js";
import { CORPUS } from "../../gym/corpus.js";

const ENCODERS: Array<[string, (text: string) => string]> = [
  ["the reference encoder", encodeUrlText],
  ["encodeURIComponent", encodeURIComponent],
  ["encodeURIComponent twice (a re-encoding proxy)", (text) => encodeURIComponent(encodeURIComponent(text))],
  ["form encoding", (text) => new URLSearchParams({ raw: text }).toString().slice(4)],
];

describe("contentBytesAtMost", () => {
  it.each(ENCODERS)("never undercounts what the bridge decodes from the corpus sent through %s", (_name, encode) => {
    for (const entry of CORPUS) {
      // Lone surrogates become U+FFFD first, as any UTF-8 writer (and encodeURIComponent's contract) needs.
      const sent = encode(Buffer.from(entry.text, "utf8").toString("utf8"));
      const decoded = parseQuery(`raw=${sent}`).raw?.text ?? "";
      expect(contentBytesAtMost(sent), entry.name).toBeGreaterThanOrEqual(Buffer.byteLength(decoded, "utf8"));
    }
  });

  it.each([
    ["%41%42", 2],
    ["~n~s~~", 3],
    ["~n~s~~%0A", 7],
    ["~u00e9", 6],
    ["~e9", 3],
    ["100%", 4],
    ["é", 2],
  ])("%j carries at most %i bytes", (sent, bytes) => {
    expect(contentBytesAtMost(sent)).toBe(bytes);
  });
});

describe("stagingPlan", () => {
  it.each([
    [20 * 1024, 22 * 1024, 3],
    [20 * 1024, 40 * 1024, 4],
    [MAX_RAW_BYTES, MAX_RAW_BYTES, 1],
    [MAX_RAW_BYTES + 1, MAX_RAW_BYTES + 1, 2],
    [160 * 1024, 170 * 1024, 20],
  ])("%i content bytes sent as %i: %i chunks, each within both limits", (content, sent, count) => {
    const plan = stagingPlan(content, sent);
    expect(plan.count).toBe(count);
    expect(plan.chunkBytes).toBeLessThanOrEqual(MAX_RAW_BYTES);
    expect(Math.ceil(sent / plan.count)).toBeLessThan(MAX_REQUEST_TARGET_BYTES - 256);
  });
});
