import { describe, expect, it } from "vitest";
import { decodePercent, decodeQueryComponent } from "../../../server/url-grammar/percent.js";

describe("decodePercent", () => {
  it.each([
    ["%20", " "],
    ["a%2Bb", "a+b"],
    ["a%2bb", "a+b"],
    ["%C3%A9", "é"],
    ["%c3%a9", "é"],
    ["%F0%9F%98%80", "😀"],
    ["%E2%82%82", "\u2082"],
    ["%25", "%"],
    ["%7E", "~"],
  ])("decodes %j", (input, expected) => {
    expect(decodePercent(input)).toBe(expected);
  });

  it.each([
    ["%", "a lone percent"],
    ["100%", "a trailing percent"],
    ["%zz", "non-hex digits"],
    ["%2", "a truncated escape"],
    ["%C3", "a lone UTF-8 lead byte"],
    ["%FF%FE", "bytes that are never UTF-8"],
    ["%ED%A0%80", "an encoded surrogate"],
    ["%C0%AF", "an overlong encoding"],
    ["%80", "a lone continuation byte"],
  ])("keeps %j verbatim (%s)", (input) => {
    expect(decodePercent(input)).toBe(input);
  });

  it("decodes the valid part of a run and keeps the invalid bytes", () => {
    expect(decodePercent("%C3%A9%FF%41")).toBe("é%FFA");
    expect(decodePercent("x%E2%82y")).toBe("x%E2%82y");
    expect(decodePercent("%C3%28")).toBe("%C3(");
  });

  it("never throws on arbitrary input", () => {
    for (let i = 0; i < 2000; i++) {
      const s = Array.from({ length: 12 }, () => "%%AFz0C3E2+"[Math.floor(Math.random() * 11)]).join("");
      expect(() => decodePercent(s)).not.toThrow();
    }
  });
});

describe("decodeQueryComponent", () => {
  it("treats an unescaped + as a space but an encoded %2B as a plus", () => {
    expect(decodeQueryComponent("a+b%2Bc")).toBe("a b+c");
  });
});
