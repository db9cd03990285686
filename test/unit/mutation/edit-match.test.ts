// edit's matching chain: exact first, then one tolerant strategy, which decides as soon as it finds anything.
import { describe, expect, it } from "vitest";
import { locateOld, MAX_TOLERANT_STEPS, reindent } from "../../../server/mutation/files/edit-match.js";

const find = (text: string, old: string, all = false) => {
  const match = locateOld(text, old, { all, limit: 1001 });
  return match && { strategy: match.strategy, found: match.spans.map((s) => text.slice(s.start, s.end)) };
};

describe("locateOld", () => {
  it.each([
    ["an exact match", "a\nb\nc\n", "b\nc", { strategy: "exact", found: ["b\nc"] }],
    ["every exact place, overlapping ones counted", "aaa", "aa", { strategy: "exact", found: ["aa", "aa"] }],
    [
      "indentation as a whole shifted",
      "x\n    if (a) {\n      b();\n    }\n",
      "if (a) {\n  b();\n}",
      { strategy: "indentation-flexible", found: ["    if (a) {\n      b();\n    }"] },
    ],
    [
      "trailing spaces, the newline after old's last line taken too",
      "a\nb  \nc\n",
      "b\n",
      { strategy: "line-trimmed", found: ["b  \n"] },
    ],
    [
      "runs of whitespace inside a line",
      "let  x =\t1;\n",
      "x = 1",
      { strategy: "whitespace-normalized", found: ["x =\t1"] },
    ],
    [
      "a changed middle between anchor lines",
      "f() {\n  a();\n  b();\n  c();\n}\n",
      "f() {\n  a();\n  B();\n  c();\n}",
      { strategy: "block-anchor", found: ["f() {\n  a();\n  b();\n  c();\n}"] },
    ],
    [
      "two tolerant places (an ambiguity, not a pick)",
      "  go();\n    go();\n",
      "go(); ",
      { strategy: "line-trimmed", found: ["  go();", "    go();"] },
    ],
  ])("finds %s", (_name, text, old, expected) => {
    expect(find(text, old)).toEqual(expected);
  });

  it.each([
    ["text that is nowhere", "a\nb\n", "c"],
    [
      "anchors whose middle is mostly different",
      "f() {\n  a();\n  b();\n  c();\n}\n",
      "f() {\n  x();\n  y();\n  z();\n}",
    ],
    ["whitespace alone", "a\n  \nb\n", " \t"],
    ["part of a line, indented differently", "x = f(1);\n", "  f(1);"],
  ])("finds nothing for %s", (_name, text, old) => {
    expect(find(text, old)).toBeUndefined();
  });

  it("gives up, as no match, once its line comparisons are spent (a file of equal lines against a long old)", () => {
    const oldLines = 2000;
    // Every window agrees on 1999 lines and fails on the last, except the one at the very end.
    const windows = Math.ceil(MAX_TOLERANT_STEPS / oldLines) + 10;
    const text = `${"  a\n".repeat(windows + oldLines)}  b\n`;
    const old = `${"a \n".repeat(oldLines - 1)}b `;
    expect(find(text, old)).toBeUndefined();
    // The same shape within the budget is found.
    expect(find(`${"  a\n".repeat(oldLines + 5)}  b\n`, old)?.strategy).toBe("line-trimmed");
  });

  it("takes every exact occurrence, non-overlapping, with all", () => {
    expect(find("aaaa", "aa", true)).toEqual({ strategy: "exact", found: ["aa", "aa"] });
  });
});

describe("reindent", () => {
  it.each([
    ["moves new to the matched depth", "  b();\n  c();", "  a();", "      a();", "      b();\n      c();"],
    ["keeps new when it does not share old's indentation", "b();\nc();", "  a();", "    a();", "b();\nc();"],
    ["keeps blank lines blank", "  b();\n\n  c();", "  a();", "    a();", "    b();\n\n    c();"],
  ])("%s", (_name, replacement, old, matched, expected) => {
    expect(reindent(replacement, old, matched)).toBe(expected);
  });
});
