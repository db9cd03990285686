import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeText, type TextEncoding } from "../../../server/text/index.js";
import { agentGet, startTestBridge, type AgentSession, type TestBridge, writeAsAgent } from "../../helpers/bridge.js";
import { url } from "./fixtures.js";

type Body = Record<string, unknown> & { ok: boolean; errorCode?: string };

const ENCODINGS: Array<[string, TextEncoding, string]> = [
  ["LF", "utf-8", "\n"],
  ["CRLF", "utf-8", "\r\n"],
  ["CR", "utf-8", "\r"],
  ["UTF-8 BOM + CRLF", "utf-8-bom", "\r\n"],
  ["UTF-16LE + CRLF", "utf-16le", "\r\n"],
  ["UTF-16BE + LF", "utf-16be", "\n"],
];

describe("edit (/e)", () => {
  let t: TestBridge;
  let s: AgentSession;
  const file = (rel: string) => path.join(t.projectDir, rel);
  beforeAll(async () => {
    t = await startTestBridge();
    s = await t.session({ write: true });
  });
  afterAll(async () => t.close());

  it.each(ENCODINGS)("round-trips a %s file byte-exactly, matching an agent's \\n", async (name, encoding, nl) => {
    const rel = `enc-${name.replace(/\W+/g, "-")}.txt`;
    const lines = (...l: string[]) => l.join(nl) + nl;
    writeAsAgent(file(rel), encodeText(lines("héllo", "one", "two", "wörld 😀"), encoding));
    fs.chmodSync(file(rel), 0o600);
    const body = await agentGet<Body>(
      url(
        s.m!,
        "e",
        [
          ["path", rel],
          ["old", "one\ntwo"],
        ],
        "ONE\n2a\n2b",
      ),
    );
    expect(body).toMatchObject({ ok: true, line: 2, encoding });
    expect(fs.readFileSync(file(rel)).equals(encodeText(lines("héllo", "ONE", "2a", "2b", "wörld 😀"), encoding))).toBe(
      true,
    );
    expect(fs.statSync(file(rel)).mode & 0o777).toBe(0o600);
  });

  it("keeps a mixed-newline file mixed, using the replaced span's own newline", async () => {
    writeAsAgent(file("mixed.txt"), "a\r\nb\nc\r\n");
    expect(
      await agentGet<Body>(
        url(
          s.m!,
          "e",
          [
            ["path", "mixed.txt"],
            ["old", "a\nb"],
          ],
          "A\nB",
        ),
      ),
    ).toMatchObject({ ok: true, newline: "mixed" });
    expect(fs.readFileSync(file("mixed.txt"), "utf8")).toBe("A\r\nB\nc\r\n");
  });

  it("says how many matches there are and on which lines when old is ambiguous", async () => {
    writeAsAgent(file("dup.ts"), "let x = 1;\nfoo();\nlet y = 2;\nfoo();\n");
    const body = await agentGet<Body>(
      url(
        s.m!,
        "e",
        [
          ["path", "dup.ts"],
          ["old", "foo();"],
        ],
        "bar();",
      ),
    );
    expect(body).toMatchObject({
      ok: false,
      errorCode: "edit_ambiguous",
      errorDetail: { occurrences: 2, lines: [2, 4] },
    });
    expect(String(body.repairHint)).toContain("2 times");
    expect(fs.readFileSync(file("dup.ts"), "utf8")).toBe("let x = 1;\nfoo();\nlet y = 2;\nfoo();\n");
  });

  it("says there is no match, points at a whitespace-only near miss, and gives read and retry URLs", async () => {
    // Not a whole-line match (the first line holds more), so no tolerant strategy applies; the loose hint still does.
    writeAsAgent(file("indent.ts"), "x = function f() {\n    return 1;\n}\n");
    const body = await agentGet<Body>(
      url(
        s.m!,
        "e",
        [
          ["path", "indent.ts"],
          ["old", "function f() {\n  return 1;"],
        ],
        "function f() {\n  return 2;",
      ),
    );
    expect(body).toMatchObject({
      ok: false,
      errorCode: "edit_no_match",
      errorDetail: { occurrences: 0, looseMatchLines: [1] },
      read: url(s.r, "r", [["path", "/project/indent.ts"]]),
    });
    expect(body.retry).toEqual(expect.stringContaining("&run=r"));
    expect(fs.readFileSync(file("indent.ts"), "utf8")).toBe("x = function f() {\n    return 1;\n}\n");
  });

  it.each([
    [
      "an empty old",
      [
        ["path", "e.txt"],
        ["old", ""],
      ],
      "x",
      "invalid_parameter",
    ],
    [
      "old equal to new",
      [
        ["path", "e.txt"],
        ["old", "same"],
      ],
      "same",
      "edit_no_change",
    ],
    [
      "a missing file",
      [
        ["path", "nope.txt"],
        ["old", "a"],
      ],
      "b",
      "path_not_found",
    ],
    [
      "old given twice (query and blob)",
      [
        ["path", "e.txt"],
        ["old", "a"],
        ["oldBlob", "ob"],
      ],
      "b",
      "conflicting_parameters",
    ],
  ] as Array<[string, Array<[string, string]>, string, string]>)("refuses %s", async (_name, params, raw, code) => {
    writeAsAgent(file("e.txt"), "same\n");
    expect(await agentGet<Body>(url(s.m!, "e", params, raw))).toMatchObject({ ok: false, errorCode: code });
    expect(fs.readFileSync(file("e.txt"), "utf8")).toBe("same\n");
  });

  it("takes old from a staged blob and new from raw=, or both from blobs", async () => {
    writeAsAgent(file("staged.ts"), "const a = 1;\nconst b = 2;\n");
    await agentGet(
      url(
        s.m!,
        "s",
        [
          ["blob", "old1"],
          ["i", 0],
          ["count", 1],
        ],
        "const a = 1;\n",
      ),
    );
    expect(
      await agentGet<Body>(
        url(
          s.m!,
          "e",
          [
            ["path", "staged.ts"],
            ["oldBlob", "old1"],
            ["oldCount", 1],
          ],
          "const a = 10;\n",
        ),
      ),
    ).toMatchObject({ ok: true });
    await agentGet(
      url(
        s.m!,
        "s",
        [
          ["blob", "old2"],
          ["i", 0],
          ["count", 1],
        ],
        "const b = 2;",
      ),
    );
    await agentGet(
      url(
        s.m!,
        "s",
        [
          ["blob", "new2"],
          ["i", 0],
          ["count", 2],
        ],
        "const b ",
      ),
    );
    await agentGet(
      url(
        s.m!,
        "s",
        [
          ["blob", "new2"],
          ["i", 1],
          ["count", 2],
        ],
        "= 20;",
      ),
    );
    expect(
      await agentGet<Body>(
        url(s.m!, "e", [
          ["path", "staged.ts"],
          ["oldBlob", "old2"],
          ["newBlob", "new2"],
        ]),
      ),
    ).toMatchObject({ ok: true });
    expect(fs.readFileSync(file("staged.ts"), "utf8")).toBe("const a = 10;\nconst b = 20;\n");
  });

  it("suggests one bulk patch from the third distinct edit within 30 s", async () => {
    writeAsAgent(file("streak.txt"), "a\nb\nc\nd\n");
    // A session of its own: the streak is per session and the other tests here edit too.
    const own = await t.session({ write: true, root: t.projectDir, name: "streak" });
    const edit = (from: string) =>
      agentGet<Body>(
        url(
          own.m!,
          "e",
          [
            ["path", "streak.txt"],
            ["old", from],
          ],
          from.toUpperCase(),
        ),
      );
    const first = await edit("a");
    const second = await edit("b");
    const replayOfSecond = await edit("b");
    expect(first.suggestedBulkPatch).toBeUndefined();
    expect(second.suggestedBulkPatch).toBeUndefined();
    expect(replayOfSecond.suggestedBulkPatch).toBeUndefined();
    const third = await edit("c");
    expect(third).toMatchObject({ ok: true, suggestedBulkPatch: true, efficiencyHint: expect.stringContaining("/a") });
    expect(fs.readFileSync(file("streak.txt"), "utf8")).toBe("A\nB\nC\nd\n");
  });
});
