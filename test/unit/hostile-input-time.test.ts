// Inputs an agent, a repository or a web page controls, shaped to make a backtracking regular expression take
// time quadratic (or worse) in their length. Each ran on the event loop, so one such input froze every session of
// the bridge: before these fixes each case below took from tens of seconds to many minutes (measured: a 64 KiB
// command word 11 s in the command guard, `rm -rf` and a hundred stars 60 s, a 12 KiB whitespace run in the
// gitignore trim 0.15 s, so ~20 min for the 1 MiB line used here). Each test checks the answer; the suite's
// 30 s test timeout is what a regression would meet, by a wide margin either way.
import { describe, expect, it } from "vitest";
import { pairRanges } from "../../server/kernel/read/read-ranges.js";
import { rebaseGitignoreLine } from "../../server/kernel/search/gitignore.js";
import { REGEX_LOOK } from "../../server/kernel/search/grep.js";
import { convertHtml, convertLibraries, htmlTitle } from "../../server/kernel/web/convert/html.js";
import { detectEndpoints } from "../../server/mutation/terminal/startup-transcript.js";
import { guardCommand } from "../../server/sandbox/command-guard.js";
import { isToolError } from "../../server/errors.js";

const KiB = 1024;

function verdict(command: string): string {
  try {
    guardCommand(command, { cwdDepth: 0 });
    return "allowed";
  } catch (error) {
    if (isToolError(error)) return (error.detail as { rule?: string } | undefined)?.rule ?? error.code;
    throw error;
  }
}

describe("the command guard on hostile commands", () => {
  it("reads a 160 KiB word (a staged command) in linear time, and still refuses a fork bomb after one", () => {
    expect(verdict(`: ${"x".repeat(160 * KiB)}; echo ran`)).toBe("allowed");
    expect(verdict(`echo ${"x".repeat(160 * KiB)}; :(){ :|:& };:`)).not.toBe("allowed");
    expect(verdict(`a${" ".repeat(160 * KiB)}x`)).toBe("allowed");
    expect(verdict(`f(){ f|f&${" ".repeat(160 * KiB)}x`)).toBe("allowed");
  });

  it("matches globs against system directories without backtracking: rm -rf and thousands of stars", () => {
    expect(verdict(`cd / && rm -rf ${"*".repeat(4000)}q`)).toBe("allowed");
    expect(verdict(`rm -rf /u${"*".repeat(16000)}q`)).toBe("allowed");
    expect(verdict(`rm -rf /.${"*".repeat(16000)}q`)).toBe("allowed");
    // The same globs still reach what they reach.
    expect(verdict(`rm -rf /u${"*".repeat(16000)}r`)).not.toBe("allowed");
    expect(verdict(`cd / && rm -rf ${"*".repeat(4000)}`)).not.toBe("allowed");
    expect(verdict("rm -rf /[eu]?[cr]")).not.toBe("allowed");
  });

  it("finds bash -c in a long flag word of c's", () => {
    expect(verdict(`bash -${"c".repeat(150 * KiB)}1 x`)).toBe("allowed");
    expect(verdict(`bash -${"c".repeat(1000)} 'rm -rf /'`)).not.toBe("allowed");
  });
});

describe("search inputs", () => {
  it("trims a 1 MiB .gitignore line of whitespace in one pass, keeping an escaped trailing space", () => {
    expect(rebaseGitignoreLine(`${"\t".repeat(1024 * KiB)}x`, "")).toBe(`${"\t".repeat(1024 * KiB)}x`);
    expect(rebaseGitignoreLine(`build${" \t".repeat(512 * KiB)}`, "")).toBe("build");
    expect(rebaseGitignoreLine("foo\\  ", "")).toBe("foo\\ ");
    expect(rebaseGitignoreLine("   ", "")).toBeUndefined();
  });

  it("tells whether a 1 MiB literal grep pattern looks like a regex without rescanning it", () => {
    expect(REGEX_LOOK.test("[*".repeat(512 * KiB))).toBe(false);
    expect(REGEX_LOOK.test(`${"[*".repeat(512 * KiB)}[a-z]`)).toBe(true);
    expect(REGEX_LOOK.test("[[:alpha:]]+")).toBe(true);
  });
});

describe("read ranges", () => {
  it("answers a lines= value with a long whitespace run as a repair question, not a stall", () => {
    const attempt = () =>
      pairRanges({
        paths: ["a.txt"],
        lines: [`1${"\t".repeat(12 * KiB)}x`],
        shared: { offset: 1, col: 1, limit: 2000 },
        sharedGiven: false,
        urlFor: () => "/r?path=a.txt",
      });
    expect(attempt).toThrow();
    let repair: unknown;
    try {
      pairRanges({
        paths: ["a.txt"],
        lines: [`3 ${"\t".repeat(12 * KiB)} 9`],
        shared: { offset: 1, col: 1, limit: 2000 },
        sharedGiven: false,
        urlFor: (pairs) => JSON.stringify(pairs),
      });
    } catch (error) {
      repair = isToolError(error) ? error.repair : undefined;
    }
    expect(JSON.parse(String(repair))).toEqual([{ path: "a.txt", range: { offset: 3, col: 1, limit: 7 } }]);
  });
});

describe("web pages", () => {
  it("tidies a <pre> holding 256 KiB of tabs before its text (our trim, after the converter)", () => {
    // "text" (html-to-text) keeps the run; turndown ("markdown") has a quadratic expression of its own, which is
    // why pages past INLINE_CONVERT_CHARS (8 K) convert on the deadline worker.
    const text = convertHtml(
      `<pre>a${"\t".repeat(256 * KiB)}x  \nb \t\n</pre>`,
      "http://page.test/",
      "text",
      convertLibraries(),
    );
    expect(text).toContain(`a${"\t".repeat(256 * KiB)}x\nb`);
    expect(text).not.toMatch(/[ \t]\n/);
  });

  it("finds the title of a page of 8,000 unclosed <title tags, and the first real one", () => {
    expect(htmlTitle("<TITLE<0".repeat(8192))).toBeUndefined();
    expect(htmlTitle("<html><head><title lang=en>Hello  world</title></head>")).toBe("Hello world");
    expect(htmlTitle(`<title>${"x".repeat(5000)}</title>`)).toBeUndefined();
  });
});

describe("a background process's start-up output", () => {
  it("scans 5,000 lines of unterminated escape sequences in linear time, and still finds the URL", () => {
    // Before: 8.7 ms per 4 KiB line of ESC ] (every line of the start-up window is scanned on the event loop).
    const noise = `${"\x1b]".repeat(2048)}\n`.repeat(5000);
    expect(detectEndpoints(`${noise}\x1b]0;dev\x07ready on http://localhost:5173/!!!\n`)).toEqual({
      urls: ["http://localhost:5173/"],
      ports: [5173],
    });
  });
});
