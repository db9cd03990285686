import { describe, expect, it } from "vitest";
import { nearestLines, RETRY_SIMILARITY } from "../../../server/mutation/files/nearest-lines.js";

describe("nearestLines", () => {
  it.each([
    ["a changed digit", "a\nreturn 1;\nb\n", "return 0;", { startLine: 2, endLine: 2, text: "return 1;", wholeLines: true }],
    ["re-indented lines", "if (x) {\n    go();\n}\n", "if (x) {\n  go();", { startLine: 1, endLine: 2, text: "if (x) {\n    go();", similarity: 1 }],
    ["old ending in a newline keeps the window's newline", "one\ntwo\nthree\n", "tw0\n", { startLine: 2, text: "two\n" }],
    ["the last line without a final newline", "one\ntwo", "tw0\n", { startLine: 2, text: "two" }],
    ["a fragment of a longer line", "say hello wonderful world\n", "hello wnderful", { startLine: 1, wholeLines: false }],
    ["old longer than the file", "x = 1\n", "x = 0\ny = 0\n", { startLine: 1, endLine: 1, wholeLines: false, excerpt: "1: x = 1" }],
  ])("%s", (_name, text, old, expected) => {
    expect(nearestLines(text, old)).toMatchObject(expected);
  });

  it("scores an unrelated file below the retry threshold and still shows it", () => {
    const near = nearestLines("alpha\nbeta\n", "zzzz qqqq")!;
    expect(near.similarity).toBeLessThan(RETRY_SIMILARITY);
    expect(near.excerpt).toBe("1: alpha\n2: beta");
  });

  it("shows two lines of context around the window in a long file, and nothing for an empty one", () => {
    const text = Array.from({ length: 40 }, (_, i) => `line number ${i + 1}`).join("\n") + "\n";
    const near = nearestLines(text, "line numbr 20")!;
    expect(near).toMatchObject({ startLine: 20, excerptStartLine: 18 });
    expect(near.excerpt.split("\n")).toHaveLength(5);
    expect(nearestLines("", "x")).toBeUndefined();
  });
});
