import { describe, expect, it } from "vitest";
import { findOccurrences, lineAt, normalizeWithOffsets } from "../../../server/mutation/files/text-match.js";

describe("newline-tolerant matching", () => {
  it("maps normalized offsets back to the original text", () => {
    const original = "ab\r\ncd\ref\n";
    const n = normalizeWithOffsets(original);
    expect(n.text).toBe("ab\ncd\nef\n");
    const at = n.text.indexOf("b\ncd");
    expect(original.slice(n.offsets[at], n.offsets[at + 4])).toBe("b\r\ncd");
    expect(n.offsets[n.text.length]).toBe(original.length);
  });

  it("counts overlapping occurrences and gives 1-based lines", () => {
    expect(findOccurrences("aaa", "aa")).toEqual([0, 1]);
    expect(lineAt("x\ny\nz", 4)).toBe(3);
  });
});
