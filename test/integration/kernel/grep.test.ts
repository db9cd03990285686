import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_GREP_OUTPUT_BYTES } from "../../../server/kernel/limits.js";
import { agentGet, makeTempDir, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";
import { url, writeTree, type Params } from "./fixtures.js";

interface GrepFileOut {
  path: string;
  lines: Array<{ line: number; text: string }>;
}
type Body = Record<string, unknown> & { files: GrepFileOut[]; matchedLines: number; repair?: string };

const flat = (body: Body) => body.files.flatMap((f) => f.lines.map((l) => `${f.path}:${l.line}:${l.text}`));

describe.each(["rg", "fallback"])("grep (/g) with the %s engine", (engine) => {
  let t: TestBridge;
  let s: AgentSession;
  const grep = (params: Params, raw?: string) => agentGet<Body>(url(s.r, "g", params, raw));

  beforeAll(async () => {
    t = await startTestBridge({ URLBRIDGE_GREP_ENGINE: engine });
    const outside = makeTempDir("outside");
    fs.writeFileSync(path.join(outside, "leak.txt"), "TODO outside the project\n");
    writeTree(t.projectDir, {
      ".gitignore": "dist/\n",
      "src/app.ts": "// TODO: first\nconst a = 1 + 2; // a+b\nconst re = /a.b(c)/;\n// todo lower\n",
      "src/util.js": "export function util() {}\n// TODO: util\n",
      "src/notes.md": "TODO in markdown\n",
      "dist/bundle.js": "TODO in dist\n",
      "node_modules/lib/index.js": "TODO in node_modules\n",
      "many.txt": Array.from({ length: 30 }, (_, i) => `match ${i + 1}\n`).join(""),
      "wide.txt": Array.from({ length: 200 }, (_, i) => `wide ${i} ${"w".repeat(200)}\n`).join(""),
      "blob.bin": Buffer.from([0x54, 0x4f, 0x44, 0x4f, 0, 1]),
    });
    fs.symlinkSync(outside, path.join(t.projectDir, "outside-link"));
    s = await t.session();
  });
  afterAll(async () => t.close());

  it("searches literally by default, in path then line order", async () => {
    const body = await grep([], "TODO");
    expect(body).toMatchObject({ ok: true, engine, path: "/project", pattern: "TODO", regex: false, truncated: false });
    expect(flat(body)).toEqual([
      "/project/src/app.ts:1:// TODO: first",
      "/project/src/notes.md:1:TODO in markdown",
      "/project/src/util.js:2:// TODO: util",
    ]);
  });

  it.each([
    ["regex punctuation", "a.b(c)", ["/project/src/app.ts:3:const re = /a.b(c)/;"]],
    ["a plus sign written ~q", "a+b", ["/project/src/app.ts:2:const a = 1 + 2; // a+b"]],
    ["a space written +", "1 + 2", ["/project/src/app.ts:2:const a = 1 + 2; // a+b"]],
  ])("treats %s literally", async (_name, needle, lines) => {
    expect(flat(await grep([["path", "src"]], needle))).toEqual(lines);
  });

  it.each([
    ["grep=", [["grep", "TODO: util"]]],
    ["query=", [["query", "TODO: util"]]],
    ["pattern=", [["pattern", "TODO: util"]]],
  ] as Array<[string, Params]>)("takes the pattern from %s as well as raw=", async (_name, params) => {
    expect(flat(await grep([["path", "src"], ...params]))).toEqual(["/project/src/util.js:2:// TODO: util"]);
  });

  it("refuses a pattern given twice, with a repair URL", async () => {
    const body = await grep([["grep", "x"]], "y");
    expect(body).toMatchObject({ ok: false, errorCode: "conflicting_parameters" });
    expect(body.repair).toBe(url(s.r, "g", [], "y"));
  });

  it.each([["1"], ["true"]])("searches a regex with regex=%s", async (flag) => {
    const body = await grep(
      [
        ["path", "src"],
        ["regex", flag],
      ],
      "TODO: (first|util)$",
    );
    expect(body.regex).toBe(true);
    expect(flat(body)).toEqual(["/project/src/app.ts:1:// TODO: first", "/project/src/util.js:2:// TODO: util"]);
  });

  it.each([["0"], ["false"]])("searches literally with regex=%s", async (flag) => {
    expect(
      flat(
        await grep(
          [
            ["path", "src"],
            ["regex", flag],
          ],
          "a.b(c)",
        ),
      ),
    ).toEqual(["/project/src/app.ts:3:const re = /a.b(c)/;"]);
  });

  it("answers an invalid regex with a repair URL that runs the same search literally", async () => {
    const body = await grep(
      [
        ["path", "src"],
        ["regex", "1"],
      ],
      "a.b(c",
    );
    expect(body).toMatchObject({ ok: false, errorCode: "invalid_regex", agentAction: "fetch_repair" });
    expect(body.repair).toBe(
      url(
        s.r,
        "g",
        [
          ["path", "src"],
          ["regex", "0"],
        ],
        "a.b(c",
      ),
    );
    const repaired = await agentGet<Body>(body.repair!);
    expect(flat(repaired)).toEqual(["/project/src/app.ts:3:const re = /a.b(c)/;"]);
  });

  // Inline flags and named groups, as agents write them for other engines: served, or repaired to a search that finds the line.
  it.each<[string, Params, string, string[], "served" | "repair" | "regexUrl"]>([
    [
      "leading (?i)",
      [
        ["path", "src/app.ts"],
        ["regex", 1],
      ],
      "(?i)^// todo",
      ["/project/src/app.ts:1:// TODO: first", "/project/src/app.ts:4:// todo lower"],
      "served",
    ],
    [
      "leading (?is) with a named group",
      [
        ["path", "src"],
        ["regex", 1],
      ],
      "(?is)todo: (?<what>FIRST|util)$",
      ["/project/src/app.ts:1:// TODO: first", "/project/src/util.js:2:// TODO: util"],
      "served",
    ],
    [
      "(?P<name>...)",
      [
        ["path", "src"],
        ["regex", 1],
      ],
      "(?P<tag>TODO): (?P<what>first|util)$",
      ["/project/src/app.ts:1:// TODO: first", "/project/src/util.js:2:// TODO: util"],
      "served",
    ],
    [
      "(?s) mid-pattern",
      [
        ["path", "src/app.ts"],
        ["regex", 1],
      ],
      "TODO(?s): first",
      ["/project/src/app.ts:1:// TODO: first"],
      "served",
    ],
    [
      "scoped (?i:...)",
      [
        ["path", "src/app.ts"],
        ["regex", 1],
      ],
      "TODO: (?i:FIRST)",
      ["/project/src/app.ts:1:// TODO: first"],
      "repair",
    ],
    [
      "(?i) mid-pattern, pattern given as pattern=",
      [
        ["path", "src/app.ts"],
        ["regex", 1],
        ["pattern", "// (?i)todo LOWER"],
      ],
      "",
      ["/project/src/app.ts:4:// todo lower"],
      "repair",
    ],
    [
      "(?i) searched literally",
      [["path", "src/app.ts"]],
      "(?i)todo lower",
      ["/project/src/app.ts:4:// todo lower"],
      "regexUrl",
    ],
  ])("%s: the answer, or its repair fetched as returned, finds the line", async (_name, params, raw, lines, how) => {
    const first = await agentGet<Body>(url(s.r, "g", params, raw === "" ? undefined : raw));
    let answer = first;
    expect(first.ok === false ? "repair" : first.matchedLines === 0 ? "regexUrl" : "served").toBe(how);
    if (first.ok === false) {
      expect(first).toMatchObject({ errorCode: "invalid_regex", agentAction: "fetch_repair" });
      expect(first.repair).toContain("ignoreCase=1");
      answer = await agentGet<Body>(first.repair!);
    } else if (first.matchedLines === 0) {
      expect(typeof first.regexUrl).toBe("string");
      answer = await agentGet<Body>(first.regexUrl as string);
    }
    expect(answer).toMatchObject({ ok: true, regex: true });
    expect(flat(answer)).toEqual(lines);
  });

  it("reads a leading (?i) as ignoreCase and says so; (?-i) turns it back off", async () => {
    expect(
      await grep(
        [
          ["path", "src/app.ts"],
          ["regex", 1],
        ],
        "(?i)TODO lower",
      ),
    ).toMatchObject({ ok: true, ignoreCase: true, matchedLines: 1 });
    const off = await grep(
      [
        ["path", "src/app.ts"],
        ["regex", 1],
        ["ignoreCase", 1],
      ],
      "(?-i)todo",
    );
    expect(off.ignoreCase).toBeUndefined();
    expect(flat(off)).toEqual(["/project/src/app.ts:4:// todo lower"]);
  });

  it("matches case-insensitively with ignoreCase=1", async () => {
    expect(
      flat(
        await grep(
          [
            ["path", "src/app.ts"],
            ["ignoreCase", 1],
          ],
          "todo",
        ),
      ),
    ).toEqual(["/project/src/app.ts:1:// TODO: first", "/project/src/app.ts:4:// todo lower"]);
  });

  it("searches one file when path= names a file", async () => {
    const body = await grep([["path", "src/util.js"]], "TODO");
    expect(body.path).toBe("/project/src/util.js");
    expect(flat(body)).toEqual(["/project/src/util.js:2:// TODO: util"]);
  });

  it.each([
    ["*.ts", ["/project/src/app.ts:1:// TODO: first"]],
    ["*.{js,md}", ["/project/src/notes.md:1:TODO in markdown", "/project/src/util.js:2:// TODO: util"]],
    ["src/*.md", ["/project/src/notes.md:1:TODO in markdown"]],
  ])("filters files with include=%s", async (glob, lines) => {
    expect(flat(await grep([["include", glob]], "TODO"))).toEqual(lines);
  });

  it("skips .gitignore'd paths, .git and node_modules unless ignored=1, and says how to include them", async () => {
    const none = await grep([], "TODO in");
    expect(flat(none)).toEqual(["/project/src/notes.md:1:TODO in markdown"]);
    const miss = await grep([], "TODO in dist");
    expect(miss.matchedLines).toBe(0);
    expect(miss.notice).toMatch(/ignoredUrl/);
    expect(miss.ignoredUrl).toBe(url(s.r, "g", [["ignored", "1"]], "TODO in dist"));
    const all = await agentGet<Body>(miss.ignoredUrl as string);
    expect(flat(all)).toEqual(["/project/dist/bundle.js:1:TODO in dist"]);
    expect(flat(await grep([["ignored", 1]], "TODO in"))).toEqual([
      "/project/dist/bundle.js:1:TODO in dist",
      "/project/node_modules/lib/index.js:1:TODO in node_modules",
      "/project/src/notes.md:1:TODO in markdown",
    ]);
  });

  it("suggests a regex search when a literal pattern looks like a regex and found nothing", async () => {
    const body = await grep([["path", "src"]], "TODO:\\s+first");
    expect(body.matchedLines).toBe(0);
    expect(body.regexUrl).toBe(
      url(
        s.r,
        "g",
        [
          ["path", "src"],
          ["regex", "1"],
        ],
        "TODO:\\s+first",
      ),
    );
    expect(flat(await agentGet<Body>(body.regexUrl as string))).toEqual(["/project/src/app.ts:1:// TODO: first"]);
  });

  it("bounds the number of lines and says how to narrow the search", async () => {
    const body = await grep([["limit", 10]], "match ");
    expect(body.matchedLines).toBe(10);
    expect(body.truncated).toBe(true);
    expect(body.notice).toMatch(/limit=.*narrow/);
    expect(flat(body).at(-1)).toBe("/project/many.txt:10:match 10");
  });

  it("is not truncated when exactly limit lines match", async () => {
    const body = await grep(
      [
        ["limit", 30],
        ["path", "many.txt"],
      ],
      "match ",
    );
    expect(body).toMatchObject({ matchedLines: 30, truncated: false });
  });

  it("bounds the bytes of text returned", async () => {
    const body = await grep([["limit", 500]], "wide ");
    expect(body.truncated).toBe(true);
    expect(body.notice).toMatch(/bytes/);
    const text = body.files.flatMap((f) => f.lines).reduce((n, l) => n + Buffer.byteLength(l.text), 0);
    expect(text).toBeLessThanOrEqual(MAX_GREP_OUTPUT_BYTES);
    expect(body.matchedLines).toBeLessThan(200);
  });

  it("never follows a symlink out of the project", async () => {
    const body = await grep([], "outside the project");
    expect(body.matchedLines).toBe(0);
    expect(await grep([["path", "outside-link"]], "TODO")).toMatchObject({ ok: false, errorCode: "symlink_escape" });
  });

  it.each([
    ["a binary file", [["path", "blob.bin"]], "TODO", "binary_file"],
    ["a missing path", [["path", "nope"]], "TODO", "path_not_found"],
    ["a path outside the project", [["path", "../"]], "TODO", "path_outside_root"],
    ["an empty pattern", [], "", "missing_parameter"],
    ["a pattern with a newline", [], "a\nb", "invalid_parameter"],
    ["a pattern with a NUL", [], "a\u0000b", "invalid_parameter"],
    ["a regex with a NUL", [["regex", 1]], "a\u0000b", "invalid_parameter"],
    ["an empty include", [["include", ""]], "TODO", "invalid_parameter"],
    ["a limit above the ceiling", [["limit", 100000]], "TODO", "invalid_parameter"],
    ["a regex the two engines read differently", [["regex", 1]], "(?<=a)b", "invalid_regex"],
  ] as Array<[string, Params, string, string]>)("refuses %s with %s", async (_name, params, raw, code) => {
    const body = await grep(params, raw);
    expect(body).toMatchObject({ ok: false, errorCode: code });
    expect(String(body.repairHint).length).toBeGreaterThan(10);
  });
});

describe("a hostile regex on the portable engine", () => {
  let t: TestBridge;
  let s: AgentSession;
  beforeAll(async () => {
    t = await startTestBridge({ URLBRIDGE_GREP_ENGINE: "fallback" });
    writeTree(t.projectDir, { "evil.txt": `${"a".repeat(40)}b\n`, "ok.txt": "fine\n" });
    s = await t.session();
  });
  afterAll(async () => t.close());

  // Runs for MAX_SEARCH_MS (10 s): the point is that the bridge keeps answering meanwhile.
  it("never stalls the bridge: other calls are answered while it runs, and it stops at the search deadline", async () => {
    const order: string[] = [];
    const hostile = agentGet<Body>(url(s.r, "g", [["regex", 1]], "(a+)+$")).then((body) => {
      order.push("grep");
      return body;
    });
    const stat = await agentGet(url(s.r, "t", [["path", "ok.txt"]]));
    order.push("stat");
    expect(stat).toMatchObject({ ok: true, kind: "file" });
    const body = await hostile;
    expect(order).toEqual(["stat", "grep"]);
    expect(body).toMatchObject({ ok: true, engine: "fallback", truncated: true, matchedLines: 0 });
    expect(body.notice).toMatch(/longer than 10 s/);
  }, 25_000);
});
