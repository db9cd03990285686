import { describe, expect, it } from "vitest";
import { buildTextPage, type PageRequest } from "../../../server/kernel/read/read-page.js";
import { ToolError } from "../../../server/errors.js";

const page = (text: string, request: Partial<PageRequest>) =>
  buildTextPage(Buffer.from(text), { offset: 1, col: 1, limit: undefined, allowance: 1 << 20, ...request });

/** Follows resume cursors until the range is complete, concatenating every page. */
function readAll(text: string, allowance: number, start: Partial<PageRequest> = {}): { joined: string; pages: number } {
  let request: PageRequest = { offset: 1, col: 1, limit: undefined, allowance, ...start };
  let joined = "";
  for (let pages = 1; pages < 10_000; pages++) {
    const p = buildTextPage(Buffer.from(text), request);
    joined += p.content;
    if (!p.resume) return { joined, pages };
    request = { ...request, offset: p.resume.line, col: p.resume.col, limit: p.resume.limit };
  }
  throw new Error("no progress");
}

describe("buildTextPage", () => {
  it.each([
    ["whole file", "a\nb\nc\n", {}, "a\nb\nc\n", 1, 3, true],
    ["offset and limit", "a\nb\nc\nd\n", { offset: 2, limit: 2 }, "b\nc\n", 2, 3, true],
    ["limit beyond the end", "a\nb\n", { offset: 2, limit: 50 }, "b\n", 2, 2, true],
    ["last line without newline", "a\nb", { offset: 2 }, "b", 2, 2, true],
    ["CRLF kept exactly", "a\r\nb\r\n", { limit: 1 }, "a\r\n", 1, 1, true],
    ["stops on a line boundary", "aaaa\nbbbb\ncccc\n", { allowance: 11 }, "aaaa\nbbbb\n", 1, 2, false],
    ["empty file", "", {}, "", 1, 0, true],
  ])("%s", (_name, text, request, content, startLine, endLine, complete) => {
    const p = page(text, request);
    expect(p).toMatchObject({ content, startLine, endLine, complete });
  });

  it("says where the next page starts, carrying the remaining limit", () => {
    const p = page("aaaa\nbbbb\ncccc\ndddd\n", { offset: 1, limit: 3, allowance: 6 });
    expect(p.content).toBe("aaaa\n");
    expect(p.resume).toEqual({ line: 2, col: 1, limit: 2 });
  });

  it.each([
    ["ASCII", "x".repeat(1000) + "\nend\n", 64],
    ["two-byte characters", "é".repeat(500) + "\n", 63],
    ["four-byte characters", "😀".repeat(300) + "\nz", 10],
    ["CRLF after a long line", "y".repeat(99) + "\r\nnext\r\n", 99],
    ["allowance smaller than one character", "😀😀😀\n", 2],
  ])(
    "splits a single line longer than the allowance on a UTF-8 boundary (%s) and continues exactly",
    (_name, text, allowance) => {
      const first = page(text, { allowance });
      expect(first.splitLine).toBe(1);
      expect(Buffer.from(first.content).toString("utf8")).toBe(first.content);
      expect(first.content).not.toContain("\ufffd");
      const { joined } = readAll(text, allowance);
      expect(joined).toBe(text);
    },
  );

  it("never leaves a page boundary inside a \\r\\n terminator", () => {
    const text = "y".repeat(10) + "\r\nz\r\n";
    const p = page(text, { allowance: 11 });
    expect(p.content).toBe("y".repeat(10) + "\r\n");
    expect(p.resume).toEqual({ line: 2, col: 1, limit: undefined });
  });

  it("reassembles a mixed file page by page with a small allowance", () => {
    const text = ["short", "é".repeat(40), "mid line here", "😀".repeat(30), "", "tail"].join("\r\n") + "\n";
    for (const allowance of [7, 16, 33, 100]) expect(readAll(text, allowance).joined).toBe(text);
  });

  it("continues a split line from a column", () => {
    const p = page("abcdef\nxyz\n", { col: 4 });
    expect(p.content).toBe("def\nxyz\n");
    expect(p.startCol).toBe(4);
  });

  it.each([
    ["offset past the end", "a\nb\n", { offset: 3 }],
    ["offset on an empty file", "", { offset: 2 }],
    ["column past the end of the line", "abc\n", { col: 5 }],
  ])("rejects %s with invalid_line_range", (_name, text, request) => {
    expect(() => page(text, request)).toThrow(ToolError);
    try {
      page(text, request);
    } catch (error) {
      expect((error as ToolError).code).toBe("invalid_line_range");
      expect((error as ToolError).message).toMatch(/\d/);
    }
  });
});
