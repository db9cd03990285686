import { describe, expect, it } from "vitest";
import {
  blockHash,
  nearestLines,
  RETRY_MARGIN,
  RETRY_SIMILARITY,
  retryRefusal,
  searchNearest,
} from "../../../server/mutation/files/nearest-lines.js";
import { pick, seededRandom } from "../../helpers/seeded-random.js";

/** The search as it was written before streaming (a bigram map per line, every window scored): the reference. */
function reference(text: string, old: string): { start: number; score: number; second: number } {
  const grams = (line: string) => {
    const s = line.trim();
    const m = new Map<string, number>();
    if (s.length === 1) m.set(s, 1);
    for (let i = 0; i + 1 < s.length; i++) m.set(s.slice(i, i + 2), (m.get(s.slice(i, i + 2)) ?? 0) + 1);
    return m;
  };
  const dice = (a: Map<string, number>, b: Map<string, number>) => {
    if (a.size === 0 && b.size === 0) return 1;
    let shared = 0;
    let total = 0;
    for (const [g, n] of a) {
      total += n;
      shared += Math.min(n, b.get(g) ?? 0);
    }
    for (const n of b.values()) total += n;
    return (2 * shared) / total;
  };
  const want = (old.endsWith("\n") ? old.slice(0, -1) : old).split("\n").map(grams);
  const lines = text.split("\n");
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  const size = Math.min(want.length, lines.length);
  const scores: number[] = [];
  for (let start = 0; start + size <= lines.length; start++) {
    let score = 0;
    for (let j = 0; j < size; j++) score += dice(want[j]!, grams(lines[start + j]!));
    scores.push(score);
  }
  const best = scores.indexOf(Math.max(...scores));
  const second = Math.max(-1, ...scores.filter((_, i) => i !== best));
  return { start: best, score: scores[best]!, second };
}

describe("nearestLines", () => {
  it.each([
    [
      "a changed digit",
      "a\nreturn 1;\nb\n",
      "return 0;",
      { startLine: 2, endLine: 2, text: "return 1;", wholeLines: true },
    ],
    [
      "re-indented lines",
      "if (x) {\n    go();\n}\n",
      "if (x) {\n  go();",
      { startLine: 1, endLine: 2, text: "if (x) {\n    go();", similarity: 1 },
    ],
    [
      "old ending in a newline keeps the window's newline",
      "one\ntwo\nthree\n",
      "tw0\n",
      { startLine: 2, text: "two\n" },
    ],
    ["the last line without a final newline", "one\ntwo", "tw0\n", { startLine: 2, text: "two" }],
    [
      "a fragment of a longer line",
      "say hello wonderful world\n",
      "hello wnderful",
      { startLine: 1, wholeLines: false },
    ],
    [
      "old longer than the file",
      "x = 1\n",
      "x = 0\ny = 0\n",
      { startLine: 1, endLine: 1, wholeLines: false, excerpt: "1: x = 1" },
    ],
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

  it("streams to the same best window and runner-up as scoring every window with a map per line (200 seeded files)", () => {
    const rand = seededRandom(27);
    const words = [
      "def",
      "return",
      "self",
      "value",
      "  ",
      "x = 1",
      "}",
      "{",
      "import os",
      "# comment",
      "",
      "a",
      "total += n",
    ];
    for (let n = 0; n < 200; n++) {
      const line = () => Array.from({ length: 1 + Math.floor(rand() * 4) }, () => pick(rand, words)).join(" ");
      const text = Array.from({ length: 1 + Math.floor(rand() * 30) }, line).join("\n") + (rand() < 0.5 ? "\n" : "");
      const old = Array.from({ length: 1 + Math.floor(rand() * 4) }, line).join("\n") + (rand() < 0.3 ? "\n" : "");
      const want = reference(text, old);
      const got = searchNearest(text, old);
      const lines = (old.endsWith("\n") ? old.slice(0, -1) : old).split("\n").length;
      const round = (x: number) => Math.round((Math.max(0, x) / lines) * 100) / 100;
      expect(got.complete).toBe(true);
      expect(got.nearest!.similarity, `${JSON.stringify(text)} / ${JSON.stringify(old)}`).toBe(round(want.score));
      expect(got.nearest!.startLine).toBe(want.start + 1);
      if (want.second >= 0) expect(got.nearest!.runnerUp!.similarity).toBe(round(want.second));
      else expect(got.nearest!.runnerUp).toBeUndefined();
    }
  });

  it("names the runner-up, and refuses a retry when it is within the margin", () => {
    const text = "def f():\n    return compute(1, 2)\n\ndef g():\n    return compute(1, 3)\n";
    const search = searchNearest(text, "    return compute(1, 4)");
    expect(search.nearest).toMatchObject({ startLine: 2, runnerUp: { startLine: 5 } });
    expect(search.nearest!.similarity - search.nearest!.runnerUp!.similarity).toBeLessThan(RETRY_MARGIN);
    expect(retryRefusal(search)).toContain(`is under ${RETRY_MARGIN}`);
    // A clear winner passes.
    const clear = searchNearest("alpha beta gamma\nsomething else entirely\n", "alpha beta gamme");
    expect(retryRefusal(clear)).toBeUndefined();
  });

  it("stops at its comparison budget, and an incomplete search offers no retry", () => {
    const text = Array.from({ length: 5000 }, (_, i) => `row ${i} payload`).join("\n");
    const search = searchNearest(text, "row 4999 payloaf", { maxComparisons: 1000 });
    expect(search.complete).toBe(false);
    expect(search.nearest!.startLine).toBeLessThan(4999);
    expect(retryRefusal(search)).toBe("the search stopped before the end of the file");
    expect(searchNearest(text, "row 4999 payloaf").nearest!.startLine).toBe(5000);
  });

  it("fingerprints the window with two lines of context: the same text hashes the same, a changed context line does not", () => {
    const text = "a\nb\nc\nd\ne\nf\ng\n";
    const near = nearestLines(text, "d")!;
    expect(near.hash).toBe(blockHash(text, text.indexOf("d"), 1));
    expect(blockHash(`x\n${text}`, text.indexOf("d") + 2, 1)).toBe(near.hash);
    expect(blockHash(text.replace("a", "A"), text.indexOf("d"), 1)).toBe(near.hash);
    expect(blockHash(text.replace("b", "B"), text.indexOf("d"), 1)).not.toBe(near.hash);
    expect(blockHash(text.replace("f", "F"), text.indexOf("d"), 1)).not.toBe(near.hash);
    expect(blockHash(text.replace("g", "G"), text.indexOf("d"), 1)).toBe(near.hash);
  });

  it("lists loose matches (indentation and trailing spaces ignored) in the same pass", () => {
    const text = "if x:\n        go()\n        stop()\n";
    expect(searchNearest(text, "if x:\n    go()\n    stop()\n").looseLines).toEqual([1]);
    expect(searchNearest(text, "go()").looseLines).toEqual([2]);
  });
});
