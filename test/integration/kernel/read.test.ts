import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  MAX_READ_BYTES,
  MAX_READ_MAX_BYTES,
  MAX_READ_PATHS,
  MIN_READ_MAX_BYTES,
} from "../../../server/kernel/limits.js";
import { agentGet, makeTempDir, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";
import { coverageProbeTool, url, utf16, UTF8_BOM, writeTree, type Params } from "./fixtures.js";

interface FileEntry {
  path: string;
  kind: string;
  content: string;
  startLine: number;
  endLine: number;
  totalLines: number;
  complete: boolean;
  next?: string;
  [key: string]: unknown;
}
type Body = Record<string, unknown> & { files: FileEntry[]; next?: string };

const numbered = (count: number, width = 60) =>
  Array.from({ length: count }, (_, i) => `${String(i + 1).padStart(5, "0")} ${"x".repeat(width)}\n`).join("");
const BIG = numbered(1000);

describe("read (/r)", () => {
  let t: TestBridge;
  let s: AgentSession;
  let outside: string;
  const read = (params: Params) => agentGet<Body>(url(s.r, "r", params));
  const coverage = (p: string) =>
    agentGet<{ complete: boolean; missing: Array<[number, number]> }>(url(s.r, "cov", [["path", p]]));

  /** Follows next URLs from a first response until the file is complete; returns every page's content. */
  async function followAll(first: Body): Promise<{ text: string; pages: number }> {
    let body = first;
    let text = body.files[0]!.content;
    let pages = 1;
    while (body.next) {
      body = await agentGet<Body>(body.next);
      expect(body.ok).toBe(true);
      text += body.files[0]!.content;
      pages++;
    }
    return { text, pages };
  }

  beforeAll(async () => {
    t = await startTestBridge({}, { extraTools: [coverageProbeTool] });
    outside = makeTempDir("outside");
    fs.writeFileSync(path.join(outside, "secret.txt"), "secret\n");
    writeTree(t.projectDir, {
      "src/app.ts": "export const a = 1;\nexport const b = 2;\nexport const c = 3;\n",
      "big.txt": BIG,
      "small1.txt": "one\n",
      "small2.txt": "two\ntwo\n",
      "empty.txt": "",
      // Longer than the default page (64 KiB).
      "long-line.txt": `${"é😀abc".repeat(8000)}\nafter\n`,
      "bom.txt": Buffer.concat([UTF8_BOM, Buffer.from("héllo\nwörld\n")]),
      "le.txt": utf16("héllo\r\nwörld 😀\r\n", false),
      "be.txt": utf16("héllo\nwörld\n", true),
      "crlf.txt": "a\r\nb\r\n",
      "cr.txt": "a\rb\r",
      "mixed.txt": "a\r\nb\nc",
      "none.txt": "no newline at all",
      "latin1.txt": Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]),
      "image.png": Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]),
      "dir/b.txt": "bee\n",
      "dir/a.txt": "ay\n",
      "dir/sub/c.txt": "see\n",
    });
    fs.mkdirSync(path.join(t.projectDir, "many"));
    for (let i = 0; i < 620; i++)
      fs.writeFileSync(path.join(t.projectDir, "many", `f${String(i).padStart(4, "0")}.txt`), "x");
    fs.symlinkSync(path.join(t.projectDir, "src"), path.join(t.projectDir, "dir", "link"));
    fs.symlinkSync(path.join(outside, "secret.txt"), path.join(t.projectDir, "escape-file"));
    fs.symlinkSync(outside, path.join(t.projectDir, "escape-dir"));
    s = await t.session();
  });
  afterAll(async () => t.close());

  it("returns a file's exact text with its line numbers, encoding, newline style and fingerprint", async () => {
    const body = await read([["path", "src/app.ts"]]);
    const bytes = fs.readFileSync(path.join(t.projectDir, "src/app.ts"));
    expect(body).toMatchObject({
      ok: true,
      requestedPaths: ["/project/src/app.ts"],
      returnedPaths: ["/project/src/app.ts"],
      allComplete: true,
      completePaths: ["/project/src/app.ts"],
      incompletePaths: [],
      unreturnedPaths: [],
    });
    expect(body.next).toBeUndefined();
    expect(body.files[0]).toEqual({
      path: "/project/src/app.ts",
      kind: "file",
      encoding: "utf-8",
      newline: "lf",
      size: bytes.length,
      fingerprint: createHash("sha256").update(bytes).digest("hex").slice(0, 32),
      totalLines: 3,
      startLine: 1,
      endLine: 3,
      content: bytes.toString("utf8"),
      complete: true,
      rangeComplete: true,
    });
  });

  it.each([
    // complete says whether the content is the whole file; rangeComplete that the range came to its end.
    ["offset only", [["offset", 2]], "export const b = 2;\nexport const c = 3;\n", 2, 3, false],
    [
      "offset and limit",
      [
        ["offset", 2],
        ["limit", 1],
      ],
      "export const b = 2;\n",
      2,
      2,
      false,
    ],
    [
      "limit past the end",
      [["limit", 99]],
      "export const a = 1;\nexport const b = 2;\nexport const c = 3;\n",
      1,
      3,
      true,
    ],
  ] as Array<[string, Params, string, number, number, boolean]>)(
    "reads a line range: %s",
    async (_name, params, content, startLine, endLine, complete) => {
      const body = await read([["path", "src/app.ts"], ...params]);
      expect(body.files[0]).toMatchObject({
        content,
        startLine,
        endLine,
        totalLines: 3,
        complete,
        rangeComplete: true,
      });
      expect(body.files[0]).not.toHaveProperty("truncated");
    },
  );

  it.each([
    ["/project/src/app.ts", "/project/src/app.ts"],
    ["./src/../src/app.ts", "/project/src/app.ts"],
    ["dir/link/app.ts", "/project/src/app.ts"],
  ])("accepts the path spelling %j", async (input, display) => {
    const body = await read([["path", input]]);
    expect(body.returnedPaths).toEqual([display]);
  });

  it("accepts a native absolute path inside the root and never shows the host path", async () => {
    const body = await read([["path", path.join(t.projectDir, "src", "app.ts")]]);
    expect(body.returnedPaths).toEqual(["/project/src/app.ts"]);
    expect(JSON.stringify(body)).not.toContain(t.projectDir);
  });

  it.each([
    ["../x", "path_outside_root"],
    ["/etc/passwd", "path_outside_root"],
    ["escape-file", "symlink_escape"],
    ["escape-dir/secret.txt", "symlink_escape"],
    ["escape-dir", "symlink_escape"],
    ["nope.txt", "path_not_found"],
  ])("refuses %j with %s", async (input, code) => {
    const body = await read([["path", input]]);
    expect(body).toMatchObject({ ok: false, errorCode: code });
    expect(JSON.stringify(body)).not.toContain("secret\\n");
  });

  it("takes file= as an alias and refuses mixing it with path=", async () => {
    expect((await agentGet<Body>(url(s.r, "r", [["file", "small1.txt"]]))).files[0]!.content).toBe("one\n");
    const mixed = await agentGet<Body>(
      url(s.r, "r", [
        ["path", "small1.txt"],
        ["file", "small2.txt"],
      ]),
    );
    expect(mixed).toMatchObject({ ok: false, errorCode: "conflicting_parameters" });
  });

  it("returns a 60 KiB source file whole in one GET by default (issue 34)", async () => {
    const lines = numbered(900);
    const sixty = `${lines}${"y".repeat(60 * 1024 - Buffer.byteLength(lines) - 1)}\n`;
    expect(Buffer.byteLength(sixty)).toBe(60 * 1024);
    fs.writeFileSync(path.join(t.projectDir, "sixty.ts"), sixty);
    const body = await read([["path", "sixty.ts"]]);
    expect(body).toMatchObject({ allComplete: true, completePaths: ["/project/sixty.ts"] });
    expect(body.next).toBeUndefined();
    expect(body.files[0]).toMatchObject({ startLine: 1, complete: true, content: sixty });
  });

  it(`stops a large file on a line boundary within ${MAX_READ_BYTES / 1024} KiB and pages it exactly with next`, async () => {
    const first = await read([["path", "big.txt"]]);
    const page = first.files[0]!;
    expect(Buffer.byteLength(page.content)).toBeLessThanOrEqual(MAX_READ_BYTES);
    expect(page.content.endsWith("\n")).toBe(true);
    expect(page).toMatchObject({ startLine: 1, totalLines: 1000, complete: false });
    expect(first).toMatchObject({ allComplete: false, incompletePaths: ["/project/big.txt"], completePaths: [] });
    expect(first.next).toBe(page.next);
    expect(first.next).toBe(
      url(s.r, "r", [
        ["path", "/project/big.txt"],
        ["offset", page.endLine + 1],
      ]),
    );
    expect((await coverage("big.txt")).complete).toBe(false);
    const { text, pages } = await followAll(first);
    expect(text).toBe(BIG);
    expect(pages).toBe(Math.ceil(Buffer.byteLength(BIG) / MAX_READ_BYTES));
    expect(await coverage("big.txt")).toEqual({ ok: true, complete: true, missing: [] });
  });

  it(`reads a 60 KiB file in one call with max= up to ${MAX_READ_MAX_BYTES} bytes, replayable from its range snapshot`, async () => {
    expect(Buffer.byteLength(BIG)).toBeGreaterThan(60 * 1024);
    const paged = await read([["path", "big.txt"]]);
    const raw = await (
      await fetch(
        url(s.r, "r", [
          ["path", "big.txt"],
          ["max", MAX_READ_MAX_BYTES],
        ]),
      )
    ).text();
    const whole = JSON.parse(raw) as Body & { rangeFallback: { id: string; first: string } };
    expect(whole).toMatchObject({ allComplete: true, completePaths: ["/project/big.txt"] });
    expect(whole.next).toBeUndefined();
    expect(whole.files[0]).toMatchObject({
      startLine: 1,
      endLine: 1000,
      complete: true,
      content: BIG,
      fingerprint: paged.files[0]!.fingerprint,
    });
    expect(await coverage("big.txt")).toEqual({ ok: true, complete: true, missing: [] });
    // /z replays the larger answer byte for byte, part by part.
    let replayed = "";
    let part: string | undefined = whole.rangeFallback.first;
    for (let i = 0; part && i < 100; i++) {
      const text = await (await fetch(part)).text();
      const newline = text.indexOf("\n");
      const meta = JSON.parse(text.slice("URLBRIDGE_RANGE ".length, newline)) as { hasMore: boolean; next?: string };
      replayed += text.slice(newline + 1);
      part = meta.hasMore ? meta.next : undefined;
    }
    expect(replayed).toBe(raw);
  });

  it("pages by a smaller max= and carries it into every next", async () => {
    const first = await read([
      ["path", "big.txt"],
      ["max", 4096],
    ]);
    const page = first.files[0]!;
    expect(Buffer.byteLength(page.content)).toBeLessThanOrEqual(4096);
    expect(first.next).toBe(
      url(s.r, "r", [
        ["path", "/project/big.txt"],
        ["offset", page.endLine + 1],
        ["max", 4096],
      ]),
    );
    const { text, pages } = await followAll(first);
    expect(text).toBe(BIG);
    expect(pages).toBe(Math.ceil(1000 / Math.floor(4096 / 67)));
  });

  it("shares max= between the files of a multi-read", async () => {
    const body = await read([
      ["path", "big.txt"],
      ["path", "small1.txt"],
      ["max", 32 * 1024],
    ]);
    const total = body.files.reduce((sum, f) => sum + Buffer.byteLength(f.content), 0);
    expect(total).toBeLessThanOrEqual(32 * 1024);
    expect(total).toBeGreaterThan(32 * 1024 - 3 * 400);
    expect(body.next).toMatch(/&max=32768$/);
  });

  it("carries the remaining line count into next", async () => {
    const body = await read([
      ["path", "big.txt"],
      ["offset", 10],
      ["limit", 990],
    ]);
    const page = body.files[0]!;
    const returned = page.endLine - page.startLine + 1;
    expect(body.next).toBe(
      url(s.r, "r", [
        ["path", "/project/big.txt"],
        ["offset", page.endLine + 1],
        ["limit", 990 - returned],
      ]),
    );
    const { text } = await followAll(body);
    expect(text).toBe(BIG.split("\n").slice(9, 999).join("\n") + "\n");
  });

  it("splits a single line longer than the budget on a UTF-8 boundary, says so, and continues it exactly", async () => {
    const first = await read([["path", "long-line.txt"]]);
    const page = first.files[0]!;
    expect(page).toMatchObject({ splitLine: 1, startLine: 1, endLine: 1, complete: false });
    expect(page.splitNotice).toMatch(/UTF-8 boundary/);
    expect(page.content).not.toContain("\ufffd");
    expect(first.next).toMatch(/offset=1&col=\d+$/);
    const { text } = await followAll(first);
    expect(text).toBe(fs.readFileSync(path.join(t.projectDir, "long-line.txt"), "utf8"));
    expect((await coverage("long-line.txt")).complete).toBe(true);
  });

  it("fair-shares one budget so a large first file cannot starve the files after it", async () => {
    const body = await read([
      ["path", "big.txt"],
      ["path", "small1.txt"],
      ["path", "small2.txt"],
    ]);
    expect(body).toMatchObject({
      requestedPaths: ["/project/big.txt", "/project/small1.txt", "/project/small2.txt"],
      returnedPaths: ["/project/big.txt", "/project/small1.txt", "/project/small2.txt"],
      allComplete: false,
      completePaths: ["/project/small1.txt", "/project/small2.txt"],
      incompletePaths: ["/project/big.txt"],
      unreturnedPaths: [],
    });
    expect(body.files.map((f) => f.content.slice(0, 5))).toEqual(["00001", "one\n", "two\nt"]);
    const total = body.files.reduce((sum, f) => sum + Buffer.byteLength(f.content), 0);
    expect(total).toBeLessThanOrEqual(MAX_READ_BYTES);
    expect(total).toBeGreaterThan(MAX_READ_BYTES - 3 * 400);
    expect(body.next).toBe(body.files[0]!.next);
  });

  it("splits the budget evenly between large files", async () => {
    const body = await read([
      ["path", "big.txt"],
      ["path", "/project/big.txt"],
      ["path", "long-line.txt"],
    ]);
    expect(body.returnedPaths).toEqual(["/project/big.txt", "/project/long-line.txt"]);
    const [a, b] = body.files.map((f) => Buffer.byteLength(f.content));
    expect(Math.abs(a! - b!)).toBeLessThan(200);
    // Both stopped short: one next continues both (it used to be undefined, with a notice to follow each).
    expect(body.notice).toMatch(/next continues all of them/);
    expect(body).toMatchObject({ truncated: true, incompletePaths: ["/project/big.txt", "/project/long-line.txt"] });
    expect(body.next).toMatch(/path=\/project\/big\.txt&lines=\d+-&path=\/project\/long-line\.txt&lines=1:\d+-/);
  });

  it("returns the readable paths of a multi-read and lists the others as unreturned with their errors", async () => {
    const body = await read([
      ["path", "small1.txt"],
      ["path", "nope.txt"],
      ["path", "escape-file"],
    ]);
    expect(body).toMatchObject({
      ok: true,
      returnedPaths: ["/project/small1.txt"],
      completePaths: ["/project/small1.txt"],
      unreturnedPaths: ["/project/nope.txt", "escape-file"],
      allComplete: false,
    });
    expect(body.failures).toEqual([
      expect.objectContaining({
        path: "/project/nope.txt",
        errorCode: "path_not_found",
        find: url(s.r, "f", [["name", "nope.txt"]]),
      }),
      expect.objectContaining({ path: "escape-file", errorCode: "symlink_escape" }),
    ]);
  });

  it(`refuses more than ${MAX_READ_PATHS} paths with a repair URL for the first batch and the rest in batches`, async () => {
    const paths = Array.from({ length: 10 }, (_, i) => `f${i}.txt`);
    const body = await agentGet<Body & { repair: string; batches: string[] }>(
      url(s.r, "r", [...paths.map((p): [string, string] => ["path", p]), ["limit", 5]]),
    );
    expect(body).toMatchObject({ ok: false, errorCode: "too_many_paths", agentAction: "fetch_repair" });
    expect(body.batches).toEqual([
      url(s.r, "r", [...paths.slice(0, 8).map((p): [string, string] => ["path", p]), ["limit", 5]]),
      url(s.r, "r", [...paths.slice(8).map((p): [string, string] => ["path", p]), ["limit", 5]]),
    ]);
    expect(body.repair).toBe(body.batches[0]);
    const repaired = await agentGet<Body>(body.repair);
    expect(repaired).toMatchObject({ ok: true, requestedPaths: paths.slice(0, 8).map((p) => `/project/${p}`) });
  });

  it("lists a directory with name, kind and size instead of failing", async () => {
    const body = await read([["path", "dir"]]);
    expect(body.files[0]).toEqual({
      path: "/project/dir",
      kind: "dir",
      totalEntries: 4,
      startEntry: 1,
      endEntry: 4,
      entries: [
        { name: "a.txt", kind: "file", size: 3 },
        { name: "b.txt", kind: "file", size: 4 },
        { name: "link", kind: "symlink" },
        { name: "sub", kind: "dir" },
      ],
      complete: true,
      rangeComplete: true,
    });
  });

  it("bounds a large directory listing and pages it with next", async () => {
    const first = await read([["path", "many"]]);
    const page = first.files[0] as unknown as {
      entries: Array<{ name: string }>;
      endEntry: number;
      totalEntries: number;
    };
    expect(page.totalEntries).toBe(620);
    expect(page.entries.length).toBeLessThan(620);
    expect(first.next).toBe(
      url(s.r, "r", [
        ["path", "/project/many"],
        ["offset", page.endEntry + 1],
      ]),
    );
    const names = [...page.entries.map((e) => e.name)];
    let body = first;
    while (body.next) {
      body = await agentGet<Body>(body.next);
      names.push(...(body.files[0] as unknown as { entries: Array<{ name: string }> }).entries.map((e) => e.name));
    }
    expect(names).toEqual(fs.readdirSync(path.join(t.projectDir, "many")).sort());
  });

  it("refuses a FIFO as not_a_file at once, without waiting for a writer", async () => {
    execFileSync("mkfifo", [path.join(t.projectDir, "pipe")]);
    const body = await read([["path", "pipe"]]);
    expect(body).toMatchObject({ ok: false, errorCode: "not_a_file", retryable: false });
    const multi = await read([
      ["path", "pipe"],
      ["path", "small1.txt"],
    ]);
    expect(multi).toMatchObject({
      ok: true,
      returnedPaths: ["/project/small1.txt"],
      unreturnedPaths: ["/project/pipe"],
    });
  });

  it("reports a binary file by size and never dumps it", async () => {
    const body = await read([["path", "image.png"]]);
    expect(body.files[0]).toMatchObject({ path: "/project/image.png", kind: "binary", size: 12, complete: true });
    expect(body.files[0]!.content).toBeUndefined();
    expect(body.allComplete).toBe(true);
  });

  it.each([
    ["bom.txt", "utf-8-bom", "lf", "héllo\nwörld\n", 2],
    ["le.txt", "utf-16le", "crlf", "héllo\r\nwörld 😀\r\n", 2],
    ["be.txt", "utf-16be", "lf", "héllo\nwörld\n", 2],
    ["crlf.txt", "utf-8", "crlf", "a\r\nb\r\n", 2],
    ["cr.txt", "utf-8", "cr", "a\rb\r", 1],
    ["mixed.txt", "utf-8", "mixed", "a\r\nb\nc", 3],
    ["none.txt", "utf-8", "none", "no newline at all", 1],
    ["empty.txt", "utf-8", "none", "", 0],
  ])(
    "decodes %s as %s with %s newlines and records the whole file as read",
    async (file, encoding, newline, content, totalLines) => {
      const body = await read([["path", file]]);
      expect(body.files[0]).toMatchObject({ encoding, newline, content, totalLines, complete: true });
      expect(await coverage(file)).toMatchObject({ complete: true, missing: [] });
    },
  );

  it("shows bytes that are not UTF-8 as U+FFFD and says so", async () => {
    const body = await read([["path", "latin1.txt"]]);
    expect(body.files[0]).toMatchObject({ content: "caf\ufffd\n", invalidUtf8: true });
  });

  it("records partial reads in byte offsets of the file on disk, and forgets them when the file changes", async () => {
    writeTree(t.projectDir, { "cov.txt": utf16("first\nsecond\nthird\n", false) });
    await read([
      ["path", "cov.txt"],
      ["offset", 2],
      ["limit", 1],
    ]);
    expect(await coverage("cov.txt")).toMatchObject({
      complete: false,
      missing: [
        [0, 14],
        [28, 40],
      ],
    });
    await read([
      ["path", "cov.txt"],
      ["limit", 1],
    ]);
    await read([
      ["path", "cov.txt"],
      ["offset", 3],
    ]);
    expect(await coverage("cov.txt")).toMatchObject({ complete: true, missing: [] });
    writeTree(t.projectDir, { "cov.txt": utf16("first\nsecond\nthird!\n", false) });
    expect((await coverage("cov.txt")).complete).toBe(false);
  });

  it.each([
    [
      "offset past the end of a file",
      [
        ["path", "small2.txt"],
        ["offset", 3],
      ],
      "invalid_line_range",
      /2 lines/,
    ],
    [
      "col past the end of the line",
      [
        ["path", "small1.txt"],
        ["col", 9],
      ],
      "invalid_line_range",
      /3 characters/,
    ],
    [
      "offset past the end of a directory",
      [
        ["path", "dir"],
        ["offset", 9],
      ],
      "invalid_line_range",
      /4 entries/,
    ],
    [
      "offset zero",
      [
        ["path", "small1.txt"],
        ["offset", 0],
      ],
      "invalid_parameter",
      /between 1 and/,
    ],
    [
      "a non-numeric limit",
      [
        ["path", "small1.txt"],
        ["limit", "ten"],
      ],
      "invalid_parameter",
      /integer/,
    ],
    [
      "col with several paths",
      [
        ["path", "small1.txt"],
        ["path", "small2.txt"],
        ["col", 2],
      ],
      "invalid_parameter",
      /single path/,
    ],
    ["no path", [], "missing_parameter", /path/],
    [
      "max= above its ceiling",
      [
        ["path", "small1.txt"],
        ["max", MAX_READ_MAX_BYTES + 1],
      ],
      "invalid_parameter",
      /between|at most|≤|less/,
    ],
    [
      "max= below its floor",
      [
        ["path", "small1.txt"],
        ["max", MIN_READ_MAX_BYTES - 1],
      ],
      "invalid_parameter",
      /between|at least|≥|greater/,
    ],
  ] as Array<[string, Params, string, RegExp]>)("refuses %s with %s", async (_name, params, code, hint) => {
    const body = await read(params);
    expect(body).toMatchObject({ ok: false, errorCode: code });
    expect(String(body.repairHint)).toMatch(hint);
  });
});
