// Per-path line ranges in one multi-read (lines= paired with path= by position), the one next URL that
// continues every incomplete path, and honest completeness fields (complete / rangeComplete / truncated).
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentGet, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";
import { url, writeTree, type Params } from "./fixtures.js";

interface Entry {
  path: string;
  kind: string;
  content: string;
  startLine: number;
  endLine: number;
  complete: boolean;
  rangeComplete: boolean;
  truncated?: true;
  next?: string;
}
type Body = Record<string, unknown> & {
  ok: boolean;
  files: Entry[];
  next?: string;
  truncated?: true;
  errorCode?: string;
  repair?: string;
};

const numbered = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, i) => `${prefix}${String(i + 1).padStart(5, "0")} ${"x".repeat(60)}\n`).join("");
const lineRange = (text: string, from: number, to: number) =>
  text
    .split(/(?<=\n)/)
    .slice(from - 1, to)
    .join("");
const A = numbered("a", 1000);
const B = numbered("b", 1000);

describe("read (/r) per-path ranges", () => {
  let t: TestBridge;
  let s: AgentSession;
  const read = (params: Params) => agentGet<Body>(url(s.r, "r", params));

  beforeAll(async () => {
    t = await startTestBridge();
    writeTree(t.projectDir, {
      "a.txt": A,
      "b.txt": B,
      "small.txt": "one\ntwo\nthree\n",
      // Real names that look like ranges: lines= can never be confused with them.
      "c.txt:10-20": "named like a range\n",
      "d.txt#L5": "named like an anchor\n",
      "many/x.txt": "x",
      "many/y.txt": "y",
      "many/z.txt": "z",
    });
    s = await t.session();
  });
  afterAll(async () => t.close());

  it("reads a different range of each path in one GET", async () => {
    const body = await read([
      ["path", "a.txt"],
      ["lines", "10-12"],
      ["path", "b.txt"],
      ["lines", "500-501"],
      ["path", "small.txt"],
      ["lines", "2-"],
    ]);
    expect(body).toMatchObject({ ok: true, allComplete: true, incompletePaths: [] });
    expect(body.truncated).toBeUndefined();
    expect(body.next).toBeUndefined();
    expect(body.files.map((f) => [f.path, f.startLine, f.endLine, f.content])).toEqual([
      ["/project/a.txt", 10, 12, lineRange(A, 10, 12)],
      ["/project/b.txt", 500, 501, lineRange(B, 500, 501)],
      ["/project/small.txt", 2, 3, "two\nthree\n"],
    ]);
    // Each range came whole, but none of them is the whole file.
    expect(body.files.map((f) => [f.complete, f.rangeComplete])).toEqual([
      [false, true],
      [false, true],
      [false, true],
    ]);
  });

  it("reads two ranges of the same file in one GET", async () => {
    const body = await read([
      ["path", "a.txt"],
      ["lines", "1-2"],
      ["path", "a.txt"],
      ["lines", "999-1000"],
    ]);
    expect(body.returnedPaths).toEqual(["/project/a.txt"]);
    expect(body.files.map((f) => f.content)).toEqual([lineRange(A, 1, 2), lineRange(A, 999, 1000)]);
  });

  it("reads file names that look like ranges or anchors as names", async () => {
    const body = await read([
      ["path", "c.txt:10-20"],
      ["path", "d.txt#L5"],
    ]);
    expect(body.files.map((f) => f.content)).toEqual(["named like a range\n", "named like an anchor\n"]);
    const ranged = await read([
      ["path", "c.txt:10-20"],
      ["lines", "1-"],
      ["path", "d.txt#L5"],
      ["lines", "1-1"],
    ]);
    expect(ranged.files.map((f) => [f.path, f.complete])).toEqual([
      ["/project/c.txt:10-20", true],
      ["/project/d.txt#L5", true],
    ]);
  });

  it("continues every incomplete path with one next URL, exactly, until the ranges are done", async () => {
    const first = await read([
      ["path", "a.txt"],
      ["lines", "1-"],
      ["path", "b.txt"],
      ["lines", "101-900"],
      ["path", "small.txt"],
      ["lines", "1-"],
      ["max", 4096],
    ]);
    expect(first).toMatchObject({
      ok: true,
      truncated: true,
      allComplete: false,
      completePaths: ["/project/small.txt"],
      incompletePaths: ["/project/a.txt", "/project/b.txt"],
    });
    const got = new Map<string, string>();
    const take = (body: Body) => body.files.forEach((f) => got.set(f.path, (got.get(f.path) ?? "") + f.content));
    take(first);
    let body = first;
    let gets = 1;
    while (body.next && gets < 200) {
      expect(body.truncated).toBe(true);
      body = await agentGet<Body>(body.next);
      expect(body.ok, JSON.stringify(body)).toBe(true);
      take(body);
      gets++;
    }
    expect(body).toMatchObject({ allComplete: true, incompletePaths: [] });
    expect(got.get("/project/a.txt")).toBe(A);
    expect(got.get("/project/b.txt")).toBe(lineRange(B, 101, 900));
    expect(got.get("/project/small.txt")).toBe("one\ntwo\nthree\n");
    // Each entry's own next still continues only that path.
    const single = first.files.find((f) => f.path === "/project/a.txt")!;
    expect(single).toMatchObject({ complete: false, rangeComplete: false, truncated: true });
    const own = await agentGet<Body>(single.next!);
    expect(own.files.map((f) => f.path)).toEqual(["/project/a.txt"]);
  });

  it("continues a split line inside a multi-read (FROM:COL- in lines=)", async () => {
    fs.writeFileSync(path.join(t.projectDir, "long.txt"), `${"é😀abc".repeat(3000)}\nafter\n`);
    const whole = fs.readFileSync(path.join(t.projectDir, "long.txt"), "utf8");
    let body = await read([
      ["path", "long.txt"],
      ["path", "a.txt"],
      ["max", 2048],
    ]);
    let text = "";
    for (let gets = 0; gets < 100; gets++) {
      text += body.files.find((f) => f.path === "/project/long.txt")?.content ?? "";
      if (!body.next || !body.next.includes("long.txt")) break;
      if (gets === 0)
        expect(body.next).toMatch(/path=\/project\/long\.txt&lines=1:\d+-&path=\/project\/a\.txt&lines=\d+-/);
      body = await agentGet<Body>(body.next);
      expect(body.ok, JSON.stringify(body)).toBe(true);
    }
    expect(text).toBe(whole);
  });

  it("pairs lines= with directories as entry ranges", async () => {
    const body = await read([
      ["path", "many"],
      ["lines", "2-2"],
      ["path", "small.txt"],
      ["lines", "3-3"],
    ]);
    expect(body.files[0]).toMatchObject({
      kind: "dir",
      startEntry: 2,
      endEntry: 2,
      entries: [{ name: "y.txt" }],
      complete: false,
      rangeComplete: true,
    });
    expect(body.files[1]).toMatchObject({ content: "three\n" });
  });

  it.each([
    [
      "one lines= per path",
      [
        ["path", "a.txt"],
        ["path", "b.txt"],
        ["lines", "1-2"],
      ],
      "invalid_parameter",
    ],
    [
      "lines= with offset=",
      [
        ["path", "a.txt"],
        ["lines", "1-2"],
        ["offset", 3],
      ],
      "conflicting_parameters",
    ],
    [
      "lines= that is no range",
      [
        ["path", "a.txt"],
        ["lines", "ten"],
      ],
      "invalid_parameter",
    ],
    [
      "lines= ending before it starts",
      [
        ["path", "a.txt"],
        ["lines", "9-3"],
      ],
      "invalid_parameter",
    ],
  ] as Array<[string, Params, string]>)("refuses %s", async (_name, params, code) => {
    const body = await read(params);
    expect(body).toMatchObject({ ok: false, errorCode: code });
  });

  it.each(["2:3", "2,3", "2..3"])(
    "repairs lines=%s to lines=2-3, and the repair succeeds as returned",
    async (value) => {
      const refused = await read([
        ["path", "small.txt"],
        ["lines", value],
        ["path", "a.txt"],
        ["lines", "1-1"],
      ]);
      expect(refused).toMatchObject({ ok: false, errorCode: "invalid_parameter" });
      const repaired = await agentGet<Body>(refused.repair!);
      expect(repaired.files.map((f) => f.content)).toEqual(["two\nthree\n", lineRange(A, 1, 1)]);
    },
  );

  it("keeps each path's range in the batches of a call over 8 paths, and the first batch succeeds as returned", async () => {
    const params: Params = Array.from({ length: 9 }, (_, i): Params => [
      ["path", "a.txt"],
      ["lines", `${i + 1}-${i + 1}`],
    ]).flat();
    const refused = await read(params);
    expect(refused).toMatchObject({ ok: false, errorCode: "too_many_paths" });
    expect((refused.batches as string[])[1]).toMatch(/path=a\.txt&lines=9-9$/);
    const first = await agentGet<Body>(refused.repair!);
    expect(first.files.map((f) => f.startLine)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it("serves lines=a-b on a single path directly (it used to need a repair round trip)", async () => {
    const body = await read([
      ["path", "small.txt"],
      ["lines", "2-3"],
    ]);
    expect(body).toMatchObject({
      ok: true,
      files: [{ startLine: 2, endLine: 3, content: "two\nthree\n", complete: false, rangeComplete: true }],
    });
  });
});

describe("read (/r) honest completeness", () => {
  let t: TestBridge;
  let s: AgentSession;
  const read = (params: Params) => agentGet<Body>(url(s.r, "r", params));
  beforeAll(async () => {
    t = await startTestBridge();
    writeTree(t.projectDir, { "a.txt": A, "small.txt": "one\ntwo\nthree\n" });
    s = await t.session();
  });
  afterAll(async () => t.close());

  it.each([
    ["the whole file", [], true, true, false],
    ["a limit= range", [["limit", 2]], false, true, false],
    ["an offset= to the end", [["offset", 2]], false, true, false],
    ["a limit that reaches past the end", [["limit", 99]], true, true, false],
  ] as Array<[string, Params, boolean, boolean, boolean]>)(
    "%s: complete=%s rangeComplete=%s",
    async (_name, params, complete, rangeComplete, truncated) => {
      const body = await read([["path", "small.txt"], ...params]);
      expect(body.files[0]).toMatchObject({ complete, rangeComplete });
      expect("truncated" in body.files[0]!).toBe(truncated);
      expect("truncated" in body).toBe(truncated);
    },
  );

  it("a page that stops short says truncated:true with next, at the top and on the entry", async () => {
    const body = await read([["path", "a.txt"]]);
    expect(body).toMatchObject({
      truncated: true,
      next: expect.any(String),
      files: [{ complete: false, rangeComplete: false, truncated: true }],
    });
    expect(body.next).toBe(body.files[0]!.next);
  });
});
