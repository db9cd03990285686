import { afterAll, describe, expect, it } from "vitest";
import { findMatchingLines, RegexWorker } from "../../../server/kernel/search/regex-worker.js";

const HOSTILE = "(a+)+$";
const HOSTILE_LINE = `${"a".repeat(40)}b\n`;

describe("findMatchingLines", () => {
  it.each([
    [
      "a\nb a\nc\n",
      "a",
      "su",
      [
        [0, 0],
        [1, 2],
      ],
    ],
    ["x\r\ny\r\n", "^y$", "su", [[1, 0]]],
    ["end\n", "^$", "su", []],
    ["one\n\nthree", "^$", "su", [[1, 0]]],
    ["Café\n", "CAFÉ", "sui", [[0, 0]]],
    ["no match\n", "zzz", "su", []],
  ] as Array<[string, string, string, Array<[number, number]>]>)("%j /%s/%s", (text, source, flags, expected) => {
    expect(findMatchingLines(text, source, flags)).toEqual(expected);
  });
});

describe("RegexWorker", () => {
  const worker = new RegexWorker();
  const never = new AbortController().signal;
  afterAll(() => worker.close());

  it("answers like findMatchingLines, file by file", async () => {
    const texts = ["alpha\nbeta\n", "gamma\n", "beta beta\n"];
    const result = await worker.match("beta", "su", texts, Date.now() + 10_000, never);
    expect(result).toEqual(texts.map((t) => findMatchingLines(t, "beta", "su")));
  });

  it("cuts off a catastrophically backtracking regex at the deadline and keeps working afterwards", async () => {
    expect(await worker.match(HOSTILE, "su", [HOSTILE_LINE], Date.now() + 300, never)).toBe("timeout");
    expect(await worker.match("b$", "su", [HOSTILE_LINE], Date.now() + 10_000, never)).toEqual([[[0, 40]]]);
  });

  it("stops when the search is aborted", async () => {
    const controller = new AbortController();
    const pending = worker.match(HOSTILE, "su", [HOSTILE_LINE], Date.now() + 60_000, controller.signal);
    controller.abort();
    expect(await pending).toBe("aborted");
  });
});
