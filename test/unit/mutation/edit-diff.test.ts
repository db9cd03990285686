// edit's diff: jsdiff over the touched lines with context, true to the files' last newline, bounded.
import { describe, expect, it } from "vitest";
import { MAX_DIFF_CHARS, unifiedDiff } from "../../../server/mutation/files/edit-diff.js";

const body = (before: string, after: string, changes: Parameters<typeof unifiedDiff>[3]) => unifiedDiff("/p", before, after, changes)!.diff.split("\n").slice(2);

describe("unifiedDiff", () => {
  it.each([
    ["the last line of a file ending in a newline (no phantom line)", "a\nb\n", "a\nc\n", [{ before: [1, 2], after: [1, 2] }], ["@@ -1,2 +1,2 @@", " a", "-b", "+c"]],
    ["a file without a final newline", "a\nb", "a\nc", [{ before: [1, 2], after: [1, 2] }], ["@@ -1,2 +1,2 @@", " a", "-b", "\\ No newline at end of file", "+c", "\\ No newline at end of file"]],
    ["a created file", "", "x\ny\n", [{ before: [0, 0], after: [0, Number.MAX_SAFE_INTEGER] }], ["@@ -0,0 +1,2 @@", "+x", "+y"]],
    ["a new line that contains the old one (one line changed, not a move)", "alpha\nbeta gamma\n", "alpha\nbeta gamma gamma\n", [{ before: [1, 2], after: [1, 2] }], ["@@ -1,2 +1,2 @@", " alpha", "-beta gamma", "+beta gamma gamma"]],
  ])("diffs %s", (_name, before, after, changes, expected) => {
    expect(body(before, after, changes as Parameters<typeof unifiedDiff>[3])).toEqual(expected);
  });

  it("numbers hunks by the whole file's lines, one per distant change", () => {
    const before = Array.from({ length: 50 }, (_, i) => `r${i + 1}`);
    const after = before.map((l, i) => (i === 1 || i === 44 ? `${l}!` : l));
    const lines = body(`${before.join("\n")}\n`, `${after.join("\n")}\n`, [{ before: [1, 2], after: [1, 2] }, { before: [44, 45], after: [44, 45] }]);
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
