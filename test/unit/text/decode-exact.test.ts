import { describe, expect, it } from "vitest";
import { convertNewlines, decodeText, detectNewlines, encodeText, type TextEncoding } from "../../../server/text/text-codec.js";
import { findOccurrences, lineAt, normalizeWithOffsets } from "../../../server/mutation/files/text-match.js";

const SAMPLE = "héllo → wörld 😀";

describe("text codec", () => {
  it.each<[TextEncoding, string]>([
    ["utf-8", "\n"],
    ["utf-8", "\r\n"],
    ["utf-8", "\r"],
    ["utf-8-bom", "\r\n"],
    ["utf-16le", "\r\n"],
    ["utf-16le", "\n"],
    ["utf-16be", "\n"],
    ["utf-16be", "\r"],
  ])("round-trips %s with %j newlines byte-exactly", (encoding, newline) => {
    const text = [SAMPLE, "line two", ""].join(newline);
    const bytes = encodeText(text, encoding);
    const outcome = decodeText(bytes);
    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;
    expect(outcome.decoded.encoding).toBe(encoding);
    expect(outcome.decoded.newline).toBe(newline);
    expect(encodeText(outcome.decoded.text, outcome.decoded.encoding).equals(bytes)).toBe(true);
  });

  it("writes the BOMs it reads", () => {
    expect([...encodeText("a", "utf-8-bom")]).toEqual([0xef, 0xbb, 0xbf, 0x61]);
    expect([...encodeText("a", "utf-16le")]).toEqual([0xff, 0xfe, 0x61, 0x00]);
    expect([...encodeText("a", "utf-16be")]).toEqual([0xfe, 0xff, 0x00, 0x61]);
  });

  it.each([
    ["a NUL byte", Buffer.from([0x61, 0x00, 0x62]), "binary"],
    ["invalid UTF-8", Buffer.from([0x61, 0xff, 0x62]), "not_round_trippable"],
    ["an odd-length UTF-16 body", Buffer.from([0xff, 0xfe, 0x61, 0x00, 0x62]), "not_round_trippable"],
    ["a lone UTF-16 surrogate", Buffer.from([0xff, 0xfe, 0x00, 0xd8, 0x61, 0x00]), "not_round_trippable"],
  ])("refuses %s", (_name, bytes, reason) => {
    expect(decodeText(bytes)).toEqual({ ok: false, reason });
  });

  it("keeps a second BOM inside the text instead of swallowing it", () => {
    const bytes = Buffer.from([0xef, 0xbb, 0xbf, 0xef, 0xbb, 0xbf, 0x61]);
    const outcome = decodeText(bytes);
    expect(outcome.ok && outcome.decoded.text).toBe("\ufeffa");
  });

  it.each([
    ["a\nb\n", "lf"],
    ["a\r\nb\r\n", "crlf"],
    ["a\rb\r", "cr"],
    ["a\r\nb\nc\r\n", "mixed"],
    ["abc", "none"],
  ])("detects the newline style of %j as %s", (text, style) => {
    expect(detectNewlines(text).style).toBe(style);
  });

  it("converts every newline kind", () => {
    expect(convertNewlines("a\nb\r\nc\rd", "\r\n")).toBe("a\r\nb\r\nc\r\nd");
  });
});

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
