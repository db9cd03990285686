// edit's diff: jsdiff over the touched lines with context, true to the files' last newline, bounded.
import { describe, expect, it } from "vitest";
import { MAX_DIFF_CHARS, unifiedDiff, wholeFileDiff } from "../../../server/mutation/files/edit-diff.js";

const body = (before: string, after: string, changes: Parameters<typeof unifiedDiff>[3]) =>
  unifiedDiff("/p", before, after, changes)!.diff.split("\n").slice(2);

describe("unifiedDiff", () => {
  it.each([
    [
      "the last line of a file ending in a newline (no phantom line)",
      "a\nb\n",
      "a\nc\n",
      [{ before: [1, 2], after: [1, 2] }],
      ["@@ -1,2 +1,2 @@", " a", "-b", "+c"],
    ],
    [
      "a file without a final newline",
      "a\nb",
      "a\nc",
      [{ before: [1, 2], after: [1, 2] }],
      ["@@ -1,2 +1,2 @@", " a", "-b", "\\ No newline at end of file", "+c", "\\ No newline at end of file"],
    ],
    [
      "a created file",
      "",
      "x\ny\n",
      [{ before: [0, 0], after: [0, Number.MAX_SAFE_INTEGER] }],
      ["@@ -0,0 +1,2 @@", "+x", "+y"],
    ],
    [
      "a new line that contains the old one (one line changed, not a move)",
      "alpha\nbeta gamma\n",
      "alpha\nbeta gamma gamma\n",
      [{ before: [1, 2], after: [1, 2] }],
      ["@@ -1,2 +1,2 @@", " alpha", "-beta gamma", "+beta gamma gamma"],
    ],
  ])("diffs %s", (_name, before, after, changes, expected) => {
    expect(body(before, after, changes as Parameters<typeof unifiedDiff>[3])).toEqual(expected);
  });

  it("numbers hunks by the whole file's lines, one per distant change", () => {
    const before = Array.from({ length: 50 }, (_, i) => `r${i + 1}`);
    const after = before.map((l, i) => (i === 1 || i === 44 ? `${l}!` : l));
    const lines = body(`${before.join("\n")}\n`, `${after.join("\n")}\n`, [
      { before: [1, 2], after: [1, 2] },
      { before: [44, 45], after: [44, 45] },
    ]);
    expect(lines.filter((l) => l.startsWith("@@"))).toEqual(["@@ -1,5 +1,5 @@", "@@ -42,7 +42,7 @@"]);
    expect(lines.filter((l) => /^[-+]/.test(l))).toEqual(["-r2", "+r2!", "-r45", "+r45!"]);
  });

  it("clips a large change to its bounds with a note", () => {
    const before = Array.from({ length: 3000 }, (_, i) => `line ${i}`).join("\n") + "\n";
    const after = before.replace(/line/g, "LINE");
    const found = unifiedDiff("/p", before, after, [{ before: [0, 3000], after: [0, 3000] }])!;
    expect(found.truncated).toBe(true);
    expect(found.diff.length).toBeLessThanOrEqual(MAX_DIFF_CHARS + 200);
    expect(found.diff).toMatch(/more diff lines not shown/);
  });

  it("answers nothing when nothing changed", () => {
    expect(unifiedDiff("/p", "a\n", "a\n", [{ before: [0, 1], after: [0, 1] }])).toBeUndefined();
  });
});

describe("wholeFileDiff", () => {
  const lines = (before: string, after: string) => wholeFileDiff("/p", before, after)!.diff.split("\n").slice(2);

  it.each([
    ["a created file that starts with an empty line", "", "\nx\n", ["@@ -0,0 +1,2 @@", "+", "+x"]],
    [
      "a final newline removed",
      "a\nb\n",
      "a\nb",
      ["@@ -1,2 +1,2 @@", " a", "-b", "+b", "\\ No newline at end of file"],
    ],
    ["a final newline added", "a", "a\n", ["@@ -1 +1 @@", "-a", "\\ No newline at end of file", "+a"]],
    ["a line inserted at the top", "a\nb\n", "z\na\nb\n", ["@@ -1,2 +1,3 @@", "+z", " a", " b"]],
    ["everything removed", "a\nb\n", "", ["@@ -1,2 +0,0 @@", "-a", "-b"]],
  ])("diffs %s", (_name, before, after, expected) => {
    expect(lines(before, after)).toEqual(expected);
  });

  it("diffs only between the common first and last lines of a large file", () => {
    const before = Array.from({ length: 200_000 }, (_, i) => `line ${i}`);
    const after = before.map((l, i) => (i === 100_000 ? "changed" : l));
    const started = performance.now();
    const diff = lines(`${before.join("\n")}\n`, `${after.join("\n")}\n`);
    expect(performance.now() - started).toBeLessThan(2000);
    expect(diff).toEqual([
      "@@ -99998,7 +99998,7 @@",
      " line 99997",
      " line 99998",
      " line 99999",
      "-line 100000",
      "+changed",
      " line 100001",
      " line 100002",
      " line 100003",
    ]);
  });

  it("names a move's source in the --- header", () => {
    expect(wholeFileDiff("/p/new", "a\n", "b\n", "/p/old")!.diff.split("\n").slice(0, 2)).toEqual([
      "--- /p/old",
      "+++ /p/new",
    ]);
  });

  it("answers nothing when nothing changed", () => {
    expect(wholeFileDiff("/p", "a\n", "a\n")).toBeUndefined();
  });
});
