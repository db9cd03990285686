import { describe, expect, it } from "vitest";
import { RegexDialectError, translateRegex } from "../../../server/kernel/search/regex-dialect.js";

describe("translateRegex", () => {
  it.each([
    ["foo", "foo", "foo"],
    ["a.b", "a.b", "a.b"],
    ["^start|end$", "^start|end$", "^start|end$"],
    ["(?:ab)+?", "(?:ab)+?", "(?:ab)+?"],
    ["x{2,3}", "x{2,3}", "x{2,3}"],
    ["\\d+", "[0-9]+", "\\d+"],
    ["\\W", "[^0-9A-Za-z_]", "\\W"],
    ["[\\w-]", "[0-9A-Za-z_-]", "[\\w-]"],
    ["[^\\D]", "[^[^0-9]]", "[^\\D]"],
    ["\\bword\\b", "(?-u:\\b)word(?-u:\\b)", "\\bword\\b"],
    ["\\x41\\u00e9\\u{1F600}", "\\x{41}\\x{E9}\\x{1F600}", "\\u{41}\\u{E9}\\u{1F600}"],
    ["\\x{A0}", "\\x{A0}", "\\u{A0}"],
    ["\\pL\\p{Lu}", "\\p{L}\\p{Lu}", "\\p{L}\\p{Lu}"],
    ["a#b&c~d-e", "a\\#b\\&c\\~d\\-e", "a#b&c~d-e"],
    ["\\.\\*\\-\\#", "\\.\\*\\-\\#", "\\.\\*-#"],
    ["[.*+]", "[\\.\\*\\+]", "[.*+]"],
    ["ünï", "ünï", "ünï"],
  ])("%j -> rust %j, js %j", (pattern, rust, js) => {
    expect(translateRegex(pattern)).toEqual({ rust, js });
  });

  it.each([
    ["(?=x)", /lookaround/],
    ["(?<!x)y", /lookaround/],
    ["(?x)a b", /Inline flags other/],
    ["(?-u)a", /Inline flags other/],
    ["a(?U)b+", /Inline flags other/],
    ["a(?i)b", /only at the start/],
    ["(?<1a>x)", /lookaround/],
    ["(a)\\1", /Backreference/],
    ["\\A", /not supported/],
    ["\\z", /not supported/],
    ["[[:alpha:]]", /POSIX/],
    ["[a&&b]", /set operation/],
    ["[a--b]", /set operation/],
    ["[]a]", /empty class/],
    ["[abc", /Unclosed \[/],
    ["(abc", /Unclosed \(/],
    ["abc)", /Unmatched \)/],
    ["*a", /nothing to repeat/],
    ["a**", /nothing to repeat/],
    ["^*", /nothing to repeat/],
    ["a{,2}", /literal \{/],
    ["a{5000}", /above 1000/],
    ["a{3,2}", /larger count/],
    ["a}", /literal \}/],
    ["\\n", /one line/],
    ["\\p{Greek}", /general category/],
    ["\\uD83D", /scalar/],
    ["[\\b]", /\\b inside/],
    ["abc\\", /lone backslash/],
  ])("refuses %j", (pattern, message) => {
    expect(() => translateRegex(pattern)).toThrow(RegexDialectError);
    expect(() => translateRegex(pattern)).toThrow(message);
  });

  it.each([
    ["(?<name>x)", { rust: "(x)", js: "(x)" }],
    ["(?P<n_1>\\d)+", { rust: "([0-9])+", js: "(\\d)+" }],
    ["(?i)abc", { rust: "abc", js: "abc", ignoreCase: true }],
    ["(?is)a.b", { rust: "a.b", js: "a.b", ignoreCase: true }],
    ["(?i)(?-i)a", { rust: "a", js: "a", ignoreCase: false }],
    ["(?s)a", { rust: "a", js: "a" }],
    ["a(?s)b", { rust: "ab", js: "ab" }],
    ["(?m:^a)|b", { rust: "(?:^a)|b", js: "(?:^a)|b" }],
  ])(
    "translates %j (named groups become plain groups; inline flags become ignoreCase or vanish)",
    (pattern, expected) => {
      expect(translateRegex(pattern)).toEqual(expected);
    },
  );

  it.each([
    ["a(?i)b", "ab"],
    ["x(?i:[a-z]+)\\(", "x(?:[a-z]+)\\("],
    ["(?i:a)[(?i)]", "(?:a)[(?i)]"],
  ])("names the ignoreCase=1 form of %j, whose case flags sit inside it", (pattern, form) => {
    try {
      translateRegex(pattern);
      expect.unreachable();
    } catch (error) {
      expect((error as RegexDialectError).ignoreCaseForm).toBe(form);
    }
  });

  it("gives the position of the offending construct", () => {
    try {
      translateRegex("abc(?=d)");
      expect.unreachable();
    } catch (error) {
      expect((error as RegexDialectError).index).toBe(3);
    }
  });
});
