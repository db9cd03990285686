import fs from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { encodeText, type TextEncoding } from "../../../server/text/index.js";
import {
  agentGet,
  makeTempDir,
  startTestBridge,
  type AgentSession,
  type TestBridge,
  writeAsAgent,
} from "../../helpers/bridge.js";
import { patchText, snapshotTree, url, writeFiles } from "./fixtures.js";

type Body = Record<string, unknown> & { ok: boolean; errorCode?: string };

describe("apply_patch (/a)", () => {
  let t: TestBridge;
  let s: AgentSession;
  let root: string;
  const file = (rel: string) => path.join(root, rel);
  const apply = (...lines: string[]) => agentGet<Body>(url(s.m!, "a", [], patchText(...lines)));

  beforeAll(async () => {
    t = await startTestBridge();
  });
  beforeEach(async () => {
    // A fresh project per test, so tree snapshots see only that test's files.
    root = makeTempDir("patch");
    s = await t.session({ write: true, root, name: `p-${path.basename(root)}` });
  });
  // At most 16 sessions may be enabled at once; each test's session retires with it.
  afterEach(async () => {
    await t.api("POST", `/api/sessions/${s.sessionId}/disable`);
  });
  afterAll(async () => t.close());

  it("adds, updates with several hunks, moves and deletes in one call", async () => {
    writeFiles(root, {
      "src/app.ts": "import a;\n\nfunction one() {\n  return 1;\n}\n\nfunction two() {\n  return 2;\n}\n",
      "old/name.ts": "x\n",
      "gone.txt": "bye\n",
    });
    fs.chmodSync(file("old/name.ts"), 0o750);
    const body = await apply(
      "*** Add File: src/new/util.ts",
      "+export const u = 1;",
      "*** Update File: src/app.ts",
      "@@ function one() {",
      "-  return 1;",
      "+  return 10;",
      "@@ function two() {",
      "-  return 2;",
      "+  return 20;",
      "*** Update File: old/name.ts",
      "*** Move to: new/name.ts",
      "@@",
      "-x",
      "+y",
      "*** Delete File: gone.txt",
    );
    expect(body).toMatchObject({
      ok: true,
      state: "succeeded",
      summary: "4 files: 1 added, 1 updated, 1 moved, 1 deleted; +4 -4 lines",
      files: [
        { path: "/project/src/new/util.ts", op: "added" },
        { path: "/project/src/app.ts", op: "updated", added: 2, removed: 2 },
        { path: "/project/new/name.ts", op: "moved", from: "/project/old/name.ts" },
        { path: "/project/gone.txt", op: "deleted" },
      ],
    });
    expect(fs.readFileSync(file("src/app.ts"), "utf8")).toBe(
      "import a;\n\nfunction one() {\n  return 10;\n}\n\nfunction two() {\n  return 20;\n}\n",
    );
    expect(fs.readFileSync(file("src/new/util.ts"), "utf8")).toBe("export const u = 1;\n");
    expect(fs.readFileSync(file("new/name.ts"), "utf8")).toBe("y\n");
    expect(fs.statSync(file("new/name.ts")).mode & 0o777).toBe(0o750);
    expect(fs.existsSync(file("old/name.ts"))).toBe(false);
    expect(fs.existsSync(file("gone.txt"))).toBe(false);
  });

  it("answers one unified diff of the files it added, updated and moved, in patch order", async () => {
    writeFiles(root, { "app.txt": "1\n2\n3\n4\n5\n6\n7\n8\n9\n", "old.txt": "x\r\n", "gone.txt": "bye\n" });
    const body = await apply(
      "*** Add File: new.txt",
      "+n",
      "*** Update File: app.txt",
      "@@",
      "-5",
      "+five",
      "*** Update File: old.txt",
      "*** Move to: moved.txt",
      "@@",
      "-x",
      "+y",
      "*** Delete File: gone.txt",
    );
    expect(body.diff).toBe(
      [
        ["--- /project/new.txt", "+++ /project/new.txt", "@@ -0,0 +1 @@", "+n"],
        [
          "--- /project/app.txt",
          "+++ /project/app.txt",
          "@@ -2,7 +2,7 @@",
          " 2",
          " 3",
          " 4",
          "-5",
          "+five",
          " 6",
          " 7",
          " 8",
        ],
        ["--- /project/old.txt", "+++ /project/moved.txt", "@@ -1 +1 @@", "-x", "+y"],
      ]
        .map((lines) => lines.join("\n"))
        .join("\n"),
    );
    expect(body.diffTruncated).toBeUndefined();
  });

  it("bounds the whole diff and names the files it leaves out", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 40; i++) files[`f${i}.txt`] = `${"a".repeat(600)}\n`;
    writeFiles(root, files);
    const text = patchText(
      ...Object.keys(files).flatMap((p) => [
        `*** Update File: ${p}`,
        "@@",
        `-${"a".repeat(600)}`,
        `+${"b".repeat(600)}`,
      ]),
    );
    const chunks = text.match(/[\s\S]{1,4000}/g)!;
    for (const [i, chunk] of chunks.entries()) {
      expect(
        await agentGet<Body>(
          url(
            s.m!,
            "s",
            [
              ["blob", "wide"],
              ["i", i],
              ["count", chunks.length],
            ],
            chunk,
          ),
        ),
      ).toMatchObject({ ok: true });
    }
    const body = await agentGet<Body>(
      url(s.m!, "a", [
        ["blob", "wide"],
        ["count", chunks.length],
      ]),
    );
    expect(body).toMatchObject({ ok: true, summary: "40 files: 40 updated; +40 -40 lines", diffTruncated: true });
    const diff = body.diff as string;
    expect(diff.length).toBeLessThanOrEqual(16 * 1024 + 200);
    expect(diff.startsWith("--- /project/f0.txt\n+++ /project/f0.txt\n@@ -1 +1 @@\n-a")).toBe(true);
    // Every file is either shown (its headers at least) or counted in the closing note.
    const note = /\n… diffs of (\d+) more file\(s\) not shown \(([^)]*)\); read them to see the change\.$/.exec(diff);
    const shown = diff.match(/^--- \/project\/f\d+\.txt$/gm)!.length;
    expect(shown).toBeGreaterThan(5);
    expect(shown + Number(note![1])).toBe(40);
    expect(note![2]!.startsWith(`/project/f${shown}.txt, `)).toBe(true);
    for (let i = 0; i < 40; i++) expect(fs.readFileSync(file(`f${i}.txt`), "utf8")).toBe(`${"b".repeat(600)}\n`);
  });

  it.each([
    [
      "a hunk that does not match",
      ["*** Update File: b.txt", "@@", "-not there", "+x"],
      "patch_hunk_not_found",
      { operation: 3, hunk: 1 },
    ],
    ["an Add of an existing file", ["*** Add File: b.txt", "+x"], "patch_target_exists", { operation: 3 }],
    ["a Delete of a missing file", ["*** Delete File: missing.txt"], "path_not_found", { operation: 3 }],
    ["a second op on the same path", ["*** Delete File: a.txt"], "patch_path_conflict", { operation: 3 }],
    ["a path outside the project", ["*** Add File: ../outside.txt", "+x"], "path_outside_root", { operation: 3 }],
    [
      "a move onto an existing file",
      ["*** Update File: b.txt", "*** Move to: a.txt"],
      "patch_path_conflict",
      { operation: 3 },
    ],
    ["a parse error", ["*** Nonsense"], "patch_parse_error", { line: 8 }],
  ])(
    "leaves every file untouched when preflight finds %s after valid operations",
    async (_name, tail, code, detail) => {
      writeFiles(root, { "a.txt": "a1\na2\n", "b.txt": "b1\n", "dir/c.txt": "c\n" });
      const before = snapshotTree(root);
      const body = await apply(
        "*** Update File: a.txt",
        "@@",
        "-a1",
        "+A1",
        "*** Add File: dir/sub/new.txt",
        "+new",
        ...tail,
      );
      expect(body).toMatchObject({ ok: false, errorCode: code, errorDetail: detail });
      expect(snapshotTree(root)).toEqual(before);
    },
  );

  it("rolls back the files already written when the commit fails part-way", async () => {
    writeFiles(root, { "a.txt": "a\n", blocker: "a file where a directory is needed\n" });
    const before = snapshotTree(root);
    const body = await apply(
      "*** Update File: a.txt",
      "@@",
      "-a",
      "+A",
      "*** Add File: fresh/one.txt",
      "+1",
      "*** Add File: blocker/child.txt",
      "+2",
    );
    expect(body).toMatchObject({
      ok: false,
      errorCode: "patch_commit_failed",
      errorDetail: { failedAt: "/project/blocker/child.txt", appliedBeforeFailure: 2, rolledBack: true },
    });
    expect(snapshotTree(root)).toEqual(before);
  });

  it.each<[string, TextEncoding, string]>([
    ["LF", "utf-8", "\n"],
    ["CRLF", "utf-8", "\r\n"],
    ["CR", "utf-8", "\r"],
    ["UTF-8 BOM", "utf-8-bom", "\n"],
    ["UTF-16LE", "utf-16le", "\r\n"],
    ["UTF-16BE", "utf-16be", "\n"],
  ])("round-trips a %s file byte-exactly", async (_name, encoding, nl) => {
    const join = (...l: string[]) => l.join(nl) + nl;
    writeAsAgent(file("f.txt"), encodeText(join("alpha", "beta", "gamma", "délta"), encoding));
    expect(
      await apply("*** Update File: f.txt", "@@", " alpha", "-beta", "+BETA", "+beta2", "@@", "-délta", "+DÉLTA"),
    ).toMatchObject({ ok: true });
    expect(
      fs.readFileSync(file("f.txt")).equals(encodeText(join("alpha", "BETA", "beta2", "gamma", "DÉLTA"), encoding)),
    ).toBe(true);
  });

  it("reports hunks that matched only when whitespace was ignored", async () => {
    writeFiles(root, { "w.py": "def f():\n\treturn 1   \n" });
    const body = await apply("*** Update File: w.py", "@@", " def f():", "-    return 1", "+\treturn 2");
    expect(body).toMatchObject({
      ok: true,
      tolerantMatches: [{ path: "/project/w.py", hunk: 1, line: 1, match: "whitespace" }],
    });
    expect(fs.readFileSync(file("w.py"), "utf8")).toBe("def f():\n\treturn 2\n");
  });

  it("applies a 60-file patch staged in chunks", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 60; i++) files[`many/f${i}.txt`] = `file ${i}\nkeep\n`;
    writeFiles(root, files);
    const text = patchText(
      ...Object.keys(files).flatMap((p, i) => [`*** Update File: ${p}`, "@@", `-file ${i}`, `+FILE ${i}`]),
    );
    const chunks = text.match(/[\s\S]{1,1000}/g)!;
    for (const [i, chunk] of chunks.entries()) {
      expect(
        await agentGet<Body>(
          url(
            s.m!,
            "s",
            [
              ["blob", "big"],
              ["i", i],
              ["count", chunks.length],
            ],
            chunk,
          ),
        ),
      ).toMatchObject({ ok: true });
    }
    const body = await agentGet<Body>(
      url(s.m!, "a", [
        ["blob", "big"],
        ["count", chunks.length],
      ]),
    );
    expect(body).toMatchObject({ ok: true, summary: "60 files: 60 updated; +60 -60 lines" });
    for (let i = 0; i < 60; i++) expect(fs.readFileSync(file(`many/f${i}.txt`), "utf8")).toBe(`FILE ${i}\nkeep\n`);
  });
});
