import { describe, expect, it } from "vitest";
import { createIncludeFilter } from "../../../server/kernel/search/include-glob.js";
import { compareNames } from "../../../server/kernel/search/walk.js";

describe("compareNames (byte order of UTF-8 names, as rg --sort=path)", () => {
  it("sorts like a byte comparison of the UTF-8 encodings", () => {
    const names = ["ü.txt", "a.txt", "a", "B.txt", "_u", "a-b", "😀", "\uffff", "Z", "a/", "é"];
    const byBytes = [...names].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
    expect([...names].sort(compareNames)).toEqual(byBytes);
  });
});

describe("createIncludeFilter", () => {
  it.each([
    ["*.ts", "src/a.ts", "a.ts", true],
    ["*.ts", "src/a.tsx", "a.tsx", false],
    ["*.{ts,tsx}", "deep/x/b.tsx", "b.tsx", true],
    ["src/**/*.py", "src/a/b/c.py", "c.py", true],
    ["src/**/*.py", "lib/src/c.py", "c.py", false],
    ["*.env", ".env", ".env", true],
    ["test_?.py", "t/test_1.py", "test_1.py", true],
  ])("%s matches %s: %s", (glob, relative, name, expected) => {
    expect(createIncludeFilter(glob).matches(relative, name)).toBe(expected);
  });

  it.each([
    ["*.ts", "*.ts"],
    ["*.{ts,tsx}", "*.{ts,tsx}"],
    ["[abc]*.js", "[abc]*.js"],
    ["src/*.ts", undefined],
    ["+(a|b).ts", undefined],
    ["!*.ts", undefined],
    ["*.{a,{b,c}}", undefined],
  ])("hands %s to ripgrep as a prefilter only when both read it alike (%s)", (glob, expected) => {
    expect(createIncludeFilter(glob).ripgrepTypeGlob).toBe(expected);
  });

  it("refuses an empty glob", () => {
    expect(() => createIncludeFilter(" ")).toThrow(/include= is empty/);
  });
});
