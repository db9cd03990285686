import { describe, expect, it } from "vitest";
import {
  findOccurrences,
  lineAt,
  normalizeWithOffsets,
  originalOffset,
} from "../../../server/mutation/files/text-match.js";

describe("newline-tolerant matching", () => {
  it("maps normalized offsets back to the original text", () => {
    const original = "ab\r\ncd\ref\n";
    const n = normalizeWithOffsets(original);
    expect(n.text).toBe("ab\ncd\nef\n");
    const at = n.text.indexOf("b\ncd");
    expect(original.slice(originalOffset(n, at), originalOffset(n, at + 4))).toBe("b\r\ncd");
    expect(originalOffset(n, n.text.length)).toBe(original.length);
  });

  it("leaves a text without CR as it is, each offset its own", () => {
    const original = "ab\ncd\n";
    const n = normalizeWithOffsets(original);
    expect(n.text).toBe(original);
    expect(n.offsets).toBeUndefined();
    expect([0, 3, original.length].map((k) => originalOffset(n, k))).toEqual([0, 3, original.length]);
  });

  it("counts overlapping occurrences and gives 1-based lines", () => {
    expect(findOccurrences("aaa", "aa")).toEqual([0, 1]);
    expect(lineAt("x\ny\nz", 4)).toBe(3);
  });
});
