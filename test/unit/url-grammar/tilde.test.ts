import { describe, expect, it } from "vitest";
import { decodeTilde } from "../../../server/url-grammar/tilde.js";

describe("decodeTilde", () => {
  it.each([
    ["~n", "\n"],
    ["~r", "\r"],
    ["~t", "\t"],
    ["~h", "#"],
    ["~p", "%"],
    ["~q", "+"],
    ["~s", " "],
    ["~a", "&"],
    ["~~", "~"],
    ["a~nb~r~nc", "a\nb\r\nc"],
    ["CO~u2082", "CO\u2082"],
    ["~u00e9", "é"],
    ["~u00E9", "é"],
    ["~uD83D~uDE00", "😀"],
    ["~u{1F600}", "😀"],
    ["~u{41}", "A"],
    ["~u{10FFFF}", "\u{10FFFF}"],
    ["~~u2082", "~u2082"],
    ["~~n", "~n"],
    ["~~~n", "~\n"],
  ])("decodes %j", (input, expected) => {
    expect(decodeTilde(input)).toBe(expected);
  });

  it.each([
    ["~e9", "an unknown escape letter"],
    ["~", "a trailing tilde"],
    ["a~", "a trailing tilde after text"],
    ["~N", "an upper-case letter"],
    ["~u12", "a truncated code unit"],
    ["~uZZZZ", "bad hex"],
    ["~uD83D", "a lone high surrogate"],
    ["~uDE00", "a lone low surrogate"],
    ["~uD83Dx", "a high surrogate followed by text"],
    ["~u{110000}", "a code point beyond 10FFFF"],
    ["~u{D800}", "a surrogate code point"],
    ["~u{}", "empty braces"],
    ["~u{1234567}", "too many hex digits"],
    ["~u{12", "unclosed braces"],
    ["~x~y~z", "several unknown escapes"],
  ])("keeps %j verbatim (%s)", (input) => {
    expect(decodeTilde(input)).toBe(input);
  });

  it("keeps a malformed escape verbatim and still decodes the next one", () => {
    expect(decodeTilde("~uD83D~n")).toBe("~uD83D\n");
    expect(decodeTilde("~e9~n")).toBe("~e9\n");
    expect(decodeTilde("~uD83D~u0041")).toBe("~uD83DA");
  });
});
