import { describe, expect, it } from "vitest";
import { ToolError } from "../../../server/errors.js";
import { applyHunks } from "../../../server/mutation/files/apply-patch/apply-hunks.js";
import { locateHunks } from "../../../server/mutation/files/apply-patch/locate.js";
import { parsePatch, type PatchOp } from "../../../server/mutation/files/apply-patch/parse.js";
import { decodeExact } from "../../../server/text/index.js";

const patch = (...lines: string[]) => ["*** Begin Patch", ...lines, "*** End Patch"].join("\n");

function parseError(text: string): ToolError {
  try {
    parsePatch(text);
  } catch (error) {
    return error as ToolError;
  }
  throw new Error("expected a parse error");
}

function update(op: PatchOp) {
  if (op.kind !== "update") throw new Error(`expected update, got ${op.kind}`);
  return op;
}

function applyTo(text: string, body: string[]): string {
  const op = update(parsePatch(patch("*** Update File: f", ...body))[0]!);
  const decoded = decodeExact(Buffer.from(text, "utf8"));
  if (!decoded.ok) throw new Error("undecodable");
  const lines = text.split(/\r\n|\r|\n/);
  if (lines[lines.length - 1] === "") lines.pop();
  const located = locateHunks(lines, op.hunks);
  if (!located.ok) throw new Error(located.reason);
  return applyHunks(decoded.decoded, located.located).text;
}

describe("apply_patch parser", () => {
  it("parses add, update with move and several hunks, and delete", () => {
    const ops = parsePatch(
      patch(
        "*** Add File: new.txt",
        "+one",
        "+two",
        "*** Update File: a.ts",
        "*** Move to: b.ts",
        "@@ function f()",
        " ctx",
        "-old",
        "+new",
        "@@",
        "-x",
        "*** End of File",
        "*** Delete File: gone.txt",
      ),
    );
    expect(ops.map((o) => o.kind)).toEqual(["add", "update", "delete"]);
    expect(ops[0]).toMatchObject({ path: "new.txt", lines: ["one", "two"] });
    const u = update(ops[1]!);
    expect(u.moveTo).toBe("b.ts");
    expect(u.hunks).toHaveLength(2);
    expect(u.hunks[0]).toMatchObject({ header: "function f()", endOfFile: false });
    expect(u.hunks[1]).toMatchObject({ header: undefined, endOfFile: true });
  });

  it("accepts a first hunk without its @@ line and drops blank separator lines", () => {
    const u = update(parsePatch(patch("*** Update File: a", " keep", "-x", "+y", "", "*** Delete File: b"))[0]!);
    expect(u.hunks[0]!.lines.map((l) => l.op + l.text)).toEqual([" keep", "-x", "+y"]);
  });

  it.each([
    ["a missing Begin Patch", "*** Update File: a\n@@\n-x\n*** End Patch", 1, "starts with"],
    ["a missing End Patch", "*** Begin Patch\n*** Delete File: a", 2, "ends with"],
    ["an unknown line", patch("*** Frobnicate: a"), 2, "expected"],
    ["a bad hunk line", patch("*** Update File: a", "@@", "?x"), 4, "hunk lines start with"],
    ["an update without hunks", patch("*** Update File: a"), 2, "no @@ hunk"],
    ["an empty path", patch("*** Delete File:   "), 2, "needs a path"],
  ])("reports %s with its patch line", (_name, text, line, words) => {
    const error = parseError(text);
    expect(error.code).toBe("patch_parse_error");
    expect((error.detail as { line?: number }).line).toBe(line);
    expect(error.message).toContain(words);
  });

  it("accepts spaces around operation headers and Move to, where a header is expected (as Codex does)", () => {
    const ops = parsePatch(
      patch(
        "  *** Add File: n.txt",
        "+n",
        " *** Delete File: c",
        "\t*** Update File: a ",
        "  *** Move to: b",
        "@@",
        "-x",
        "+y",
      ),
    );
    expect(ops.map((op) => [op.kind, op.path])).toEqual([
      ["add", "n.txt"],
      ["delete", "c"],
      ["update", "a"],
    ]);
    expect(update(ops[2]!).moveTo).toBe("b");
  });

  it("keeps an indented header line inside an Update's hunk as context, as Codex does", () => {
    const u = update(parsePatch(patch("*** Update File: a", "@@", " *** Add File: x", "-y", "+z"))[0]!);
    expect(u.hunks[0]!.lines.map((l) => l.op + l.text)).toEqual([" *** Add File: x", "-y", "+z"]);
  });

  it("points at ~q when a + line arrived as a space", () => {
    expect(parseError(patch("*** Add File: a", " content")).message).toContain("~q");
  });
});

describe("hunk location and application", () => {
  it("applies several hunks in order and keeps everything else", () => {
    expect(applyTo("a\nb\nc\nd\ne\n", ["@@", " a", "-b", "+B", "@@", " d", "-e", "+E"])).toBe("a\nB\nc\nd\nE\n");
  });

  it("uses the @@ header to choose between repeated context", () => {
    const text = "function one() {\n  return 1;\n}\nfunction two() {\n  return 1;\n}\n";
    expect(applyTo(text, ["@@ function two() {", "-  return 1;", "+  return 2;"])).toBe(
      text.replace(/return 1;\n}\n$/, "return 2;\n}\n"),
    );
  });

  it("reports a whitespace-tolerant match and keeps the file's own context bytes", () => {
    const op = update(parsePatch(patch("*** Update File: f", "@@", " if (x) {", "-    y();", "+    z();"))[0]!);
    const located = locateHunks(["\tif (x) {", "\t    y();", "}"], op.hunks);
    expect(located.ok && located.located[0]!.match).toBe("whitespace");
    const decoded = decodeExact(Buffer.from("\tif (x) {\n\t    y();\n}\n"));
    if (!decoded.ok || !located.ok) throw new Error("setup");
    expect(applyHunks(decoded.decoded, located.located).text).toBe("\tif (x) {\n    z();\n}\n");
  });

  it("fails a hunk whose lines are absent, naming it", () => {
    const op = update(parsePatch(patch("*** Update File: f", "@@", " a", "-b", "@@", "-zzz"))[0]!);
    const located = locateHunks(["a", "b", "c"], op.hunks);
    expect(located).toMatchObject({ ok: false, hunkIndex: 1 });
  });

  it("anchors *** End of File hunks at the end", () => {
    expect(applyTo("x\ny\nx\n", ["@@", "-x", "+X", "*** End of File"])).toBe("x\ny\nX\n");
  });

  it("appends a hunk without old lines at the end", () => {
    expect(applyTo("a\n", ["@@", "+b"])).toBe("a\nb\n");
  });

  it.each([
    ["keeps a missing final newline", "a\nb", ["@@", " a", "-b", "+c"], "a\nc"],
    ["keeps a final newline", "a\nb\n", ["@@", "-b", "+c"], "a\nc\n"],
    ["appends after an unterminated last line", "a", ["@@", " a", "+b"], "a\nb"],
    ["writes new lines with CRLF in a CRLF file", "a\r\nb\r\n", ["@@", " a", "+x", " b"], "a\r\nx\r\nb\r\n"],
    ["keeps each line's own newline in a mixed file", "a\r\nb\nc\r\n", ["@@", " b", "-c", "+C"], "a\r\nb\nC\r\n"],
  ])("%s", (_name, text, body, expected) => {
    expect(applyTo(text, body)).toBe(expected);
  });
});
