import { describe, expect, it } from "vitest";
import { createIgnoreLevel, isIgnored, rebaseGitignoreLine } from "../../../server/kernel/search/gitignore.js";

describe("rebaseGitignoreLine", () => {
  it.each([
    ["*.log", "", "*.log"],
    ["*.log", "src", "/src/**/*.log"],
    ["/build", "src", "/src/build"],
    ["gen/*.ts", "src", "/src/gen/*.ts"],
    ["dist/", "pkg/a", "/pkg/a/**/dist/"],
    ["!keep.log", "src", "!/src/**/keep.log"],
    ["**/tmp", "src", "/src/**/tmp"],
    ["cache/**", "src", "/src/cache/**"],
    ["x", "we*ird[1]", "/we\\*ird\\[1\\]/**/x"],
    ["# comment", "src", undefined],
    ["   ", "src", undefined],
    ["trailing   ", "src", "/src/**/trailing"],
  ])("%j from %j -> %j", (line, dir, expected) => {
    expect(rebaseGitignoreLine(line, dir)).toBe(expected);
  });
});

describe("isIgnored", () => {
  const root = createIgnoreLevel("", "*.log\nbuild/\n/top.txt\nfoo/\n");
  const sub = createIgnoreLevel("sub", "!keep.log\n!foo/\nlocal.txt\n");

  it.each([
    ["a.log", false, true],
    ["sub/a.log", false, true],
    ["sub/keep.log", false, false],
    ["build", true, true],
    ["build", false, false],
    ["top.txt", false, true],
    ["sub/top.txt", false, false],
    ["sub/local.txt", false, true],
    ["local.txt", false, false],
    ["sub/foo", true, false],
    ["sub/foo/x.txt", false, false],
    ["FOO.LOG", false, false],
    ["a.LOG", false, false],
  ])("%j (dir: %s) ignored: %s", (rel, isDir, expected) => {
    const levels = rel.startsWith("sub/") ? [root, sub] : [root];
    expect(isIgnored(levels, rel, isDir)).toBe(expected);
  });
});
