// OpenCode's tool-test expectations that matter to an agent (issue 26), on both transports: its field names
// (filePath, oldString, newString, replaceAll), replaceAll, tolerant edit when the match is unique, ambiguity
// refused with a hint naming replaceAll (all=1 over URLs), creation by an empty oldString, glob newest first and
// 1-based line numbering. Plus the diff's truth: from the bytes, replayed as it happened.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentGet, startTestBridge, type TestBridge, writeAsAgent, mkdirAsAgent } from "../../helpers/bridge.js";
import { url } from "./fixtures.js";
import { openTransport, type Transport } from "./edit-transports.js";

let tb: TestBridge;
const transports: Record<"url" | "mcp", Transport> = {} as Record<"url" | "mcp", Transport>;

beforeAll(async () => {
  tb = await startTestBridge();
  transports.url = await openTransport(tb, "url");
  transports.mcp = await openTransport(tb, "mcp");
});

afterAll(async () => {
  for (const t of Object.values(transports)) await t.close();
  await tb.close();
});

const put = (t: Transport, rel: string, content: string) => writeAsAgent(path.join(t.root, rel), content);
const disk = (t: Transport, rel: string) => fs.readFileSync(path.join(t.root, rel), "utf8");
/** The diff's body lines that remove (-) or add (+) text, headers left out. */
const changed = (diff: unknown, sign: "-" | "+") =>
  String(diff)
    .split("\n")
    .filter((l) => l.startsWith(sign) && !l.startsWith(`${sign}${sign}${sign} `));

describe.each(["url", "mcp"] as const)("over %s", (name) => {
  const t = () => transports[name];

  it("takes OpenCode's field names: filePath on read, edit and write", async () => {
    put(t(), "fields.txt", "alpha\nbeta\n");
    expect((await t().read({ filePath: "fields.txt" })).body).toMatchObject({ ok: true });
    expect((await t().edit({ filePath: "fields.txt", oldString: "beta", newString: "gamma" })).body).toMatchObject({
      ok: true,
      matchedBy: "exact",
      line: 2,
    });
    expect((await t().write({ filePath: "fields-new.txt", content: "new\n" })).body).toMatchObject({
      ok: true,
      created: true,
    });
    expect(disk(t(), "fields.txt")).toBe("alpha\ngamma\n");
  });

  it("refuses path and filePath given together, writing nothing", async () => {
    const answer =
      name === "url"
        ? await agentGet(
            url(
              t().bases.m!,
              "w",
              [
                ["path", "both-a.txt"],
                ["filePath", "both-b.txt"],
              ],
              "x",
            ),
          )
        : (await t().write({ filePath: "both-b.txt", content: "x", path: "both-a.txt" } as never)).body;
    expect(answer).toMatchObject({ ok: false, errorCode: "conflicting_parameters" });
    expect(fs.existsSync(path.join(t().root, "both-a.txt")) || fs.existsSync(path.join(t().root, "both-b.txt"))).toBe(
      false,
    );
  });

  it("replaces every occurrence with replaceAll, and refuses an ambiguous edit with a hint naming it", async () => {
    put(t(), "all.ts", "let a = 1;\nlet b = 1;\nlet c = 2;\n");
    const ambiguous = await t().edit({ filePath: "all.ts", oldString: "= 1;", newString: "= 3;" });
    expect(ambiguous.body).toMatchObject({
      ok: false,
      errorCode: "edit_ambiguous",
      errorDetail: { occurrences: 2, lines: [1, 2] },
    });
    expect(ambiguous.text).toContain(name === "mcp" ? "replaceAll: true" : "all=1");
    expect(disk(t(), "all.ts")).toBe("let a = 1;\nlet b = 1;\nlet c = 2;\n");
    const all = await t().edit({ filePath: "all.ts", oldString: "= 1;", newString: "= 3;", replaceAll: true });
    expect(all.body).toMatchObject({ ok: true, occurrences: 2, line: 1, matchedBy: "exact" });
    expect(disk(t(), "all.ts")).toBe("let a = 3;\nlet b = 3;\nlet c = 2;\n");
  });

  it.each([
    [
      "indentation drift (re-indented to the file's depth)",
      "class A {\n    run() {\n      go();\n    }\n}\n",
      "  run() {\n    go();\n  }",
      "  run() {\n    stop();\n  }",
      "indentation-flexible",
      "class A {\n    run() {\n      stop();\n    }\n}\n",
    ],
    ["trailing spaces", "x();\ny();   \nz();\n", "y();\nz();", "Y();\nz();", "line-trimmed", "x();\nY();\nz();\n"],
    [
      "whitespace inside a line",
      "const  total =   a + b;\n",
      "const total = a + b",
      "const total = a - b",
      "whitespace-normalized",
      "const total = a - b;\n",
    ],
    [
      "a drifted middle between matching first and last lines",
      "if (ok) {\n  one();\n  two();\n  three();\n}\n",
      "if (ok) {\n  one();\n  TWO();\n  three();\n}",
      "if (ok) {\n  done();\n}",
      "block-anchor",
      "if (ok) {\n  done();\n}\n",
    ],
  ])(
    "edits despite %s when the match is unique, saying how and what it replaced",
    async (_case, content, oldString, newString, strategy, after) => {
      const rel = `tolerant-${strategy}.txt`;
      put(t(), rel, content);
      const done = await t().edit({ filePath: rel, oldString, newString });
      expect(done.body).toMatchObject({ ok: true, matchedBy: strategy });
      expect(typeof done.body.replaced).toBe("string");
      expect(content).toContain(String(done.body.replaced));
      expect(disk(t(), rel)).toBe(after);
    },
  );

  it("refuses a tolerant match that is not unique, changing nothing", async () => {
    const content = "function a() {\n    go();\n}\nfunction b() {\n  go();\n}\n";
    put(t(), "tolerant-twice.ts", content);
    const refused = await t().edit({ filePath: "tolerant-twice.ts", oldString: " go();", newString: " stop();" });
    // " go();" occurs exactly twice: an exact ambiguity, never settled by a looser strategy.
    expect(refused.body).toMatchObject({ ok: false, errorCode: "edit_ambiguous" });
    const drifted = await t().edit({ filePath: "tolerant-twice.ts", oldString: "\tgo();", newString: "\tstop();" });
    expect(drifted.body).toMatchObject({
      ok: false,
      errorCode: "edit_ambiguous",
      errorDetail: { matchedBy: "indentation-flexible", lines: [2, 5] },
    });
    expect(disk(t(), "tolerant-twice.ts")).toBe(content);
  });

  it("answers edit_no_change when the one tolerant match already reads as newString", async () => {
    put(t(), "same.txt", "a\nfoo();\nb\n");
    const done = await t().edit({ filePath: "same.txt", oldString: "foo();   ", newString: "foo();" });
    expect(done.body).toMatchObject({
      ok: false,
      errorCode: "edit_no_change",
      errorDetail: { matchedBy: "line-trimmed" },
    });
    expect(disk(t(), "same.txt")).toBe("a\nfoo();\nb\n");
  });

  it("creates a missing file from an empty oldString, and refuses one on a file with content", async () => {
    const created = await t().edit({ filePath: "made/by-edit.txt", oldString: "", newString: "first\nsecond\n" });
    expect(created.body).toMatchObject({ ok: true, created: true, linesAdded: 2 });
    expect(disk(t(), "made/by-edit.txt")).toBe("first\nsecond\n");
    const refused = await t().edit({ filePath: "made/by-edit.txt", oldString: "", newString: "other\n" });
    expect(refused.body).toMatchObject({ ok: false, errorCode: "invalid_parameter" });
    expect(disk(t(), "made/by-edit.txt")).toBe("first\nsecond\n");
  });

  it("lists glob matches newest first", async () => {
    mkdirAsAgent(path.join(t().root, "g"), { recursive: true });
    const times: Array<[string, number]> = [
      ["g/a.log", 1_000],
      ["g/b.log", 3_000],
      ["g/c.log", 2_000],
    ];
    for (const [rel, at] of times) {
      put(t(), rel, rel);
      fs.utimesSync(path.join(t().root, rel), at, at);
    }
    expect(await t().glob("*.log")).toEqual(["/project/g/b.log", "/project/g/c.log", "/project/g/a.log"]);
  });

  it("numbers lines from 1 and starts a page at offset", async () => {
    put(t(), "numbered.txt", Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join("\n") + "\n");
    const page = await t().read({ filePath: "numbered.txt", offset: 4, limit: 2 });
    if (name === "mcp") {
      // MCP answers the page flat, its lines numbered in structuredContent too (docs/MCP.md "Budgets").
      expect(page.body).toMatchObject({
        ok: true,
        kind: "file",
        startLine: 4,
        endLine: 5,
        lines: "4\tline 4\n5\tline 5",
      });
      expect(page.text).toMatch(/^4\tline 4\n5\tline 5$/m);
    } else {
      expect(page.body).toMatchObject({ ok: true, files: [{ startLine: 4, endLine: 5, content: "line 4\nline 5\n" }] });
    }
  });

  it("shows the change that happened: a replay answers the recorded diff, not a new one", async () => {
    put(t(), "replay.txt", "alpha\nbeta gamma\n");
    const args = {
      filePath: "replay.txt",
      oldString: "beta gamma",
      newString: "beta gamma gamma",
      key: `replay-${name}`,
    };
    const first = await t().edit(args);
    expect(changed(first.body.diff, "-")).toEqual(["-beta gamma"]);
    expect(changed(first.body.diff, "+")).toEqual(["+beta gamma gamma"]);
    const again = await t().edit(args);
    expect(again.body).toMatchObject({ ok: true, dedupe: "replayed", diff: first.body.diff });
    expect(disk(t(), "replay.txt")).toBe("alpha\nbeta gamma gamma\n");
  });

  it("diffs a replaceAll on lines 2 and 199 of 200 as two one-line changes, with no phantom last line", async () => {
    const lines = Array.from({ length: 200 }, (_, i) => (i === 1 || i === 198 ? "TODO" : `row ${i + 1}`));
    put(t(), "spread.txt", `${lines.join("\n")}\n`);
    const done = await t().edit({ filePath: "spread.txt", oldString: "TODO", newString: "DONE", replaceAll: true });
    expect(done.body).toMatchObject({ ok: true, occurrences: 2, line: 2 });
    expect(changed(done.body.diff, "-")).toEqual(["-TODO", "-TODO"]);
    expect(changed(done.body.diff, "+")).toEqual(["+DONE", "+DONE"]);
    expect(String(done.body.diff).match(/^@@ /gm)).toHaveLength(2);
    expect(String(done.body.diff)).toContain("@@ -196,5 +196,5 @@");
    expect(String(done.body.diff)).not.toContain("No newline");
    if (name === "mcp") expect(done.text).toContain("-TODO\n+DONE");
  });
});
