// /r of files over RANGED_READ_MIN_BYTES: pages cut from their byte range (server/kernel/read/ranged-page.ts)
// must be the very pages a whole-file read cuts (buildTextPage over the whole file is the reference), carry the
// whole file's fingerprint, and reach past the whole-file cap; the index cache (large-file-index.ts) serves one
// version of a file only, within its bound.
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  MAX_READ_BYTES,
  MAX_READ_MAX_BYTES,
  MAX_TEXT_FILE_BYTES,
  RANGED_READ_MIN_BYTES,
} from "../../../server/kernel/limits.js";
import { LargeFileIndexCache } from "../../../server/kernel/read/large-file-index.js";
import { buildTextPage } from "../../../server/kernel/read/read-page.js";
import { indexLines } from "../../../server/text/index.js";
import { agentGet, makeTempDir, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";
import { coverageProbeTool, url, utf16, UTF8_BOM, type Params } from "./fixtures.js";

interface FileEntry {
  content: string;
  startLine: number;
  endLine: number;
  totalLines: number;
  complete: boolean;
  rangeComplete: boolean;
  fingerprint: string;
  encoding: string;
  newline: string;
  next?: string;
  splitLine?: number;
  invalidUtf8?: boolean;
}
type Body = { ok: boolean; files: FileEntry[]; next?: string; errorCode?: string };

const fingerprintOf = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex").slice(0, 32);

/** Seeded lines of every kind a page must cut right: short, empty, multibyte, CRLF, and one very long line. */
function mixedText(bytes: number, seed: number): string {
  let state = seed;
  const random = () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const parts: string[] = [];
  let size = 0;
  let line = 0;
  while (size < bytes) {
    line++;
    const r = random();
    const body =
      line === 4000
        ? "long é😀 ".repeat(40_000)
        : r < 0.1
          ? ""
          : r < 0.3
            ? `${line} ${"é😀ü".repeat(Math.floor(random() * 60))}`
            : `${line} ${"x".repeat(Math.floor(random() * 200))}`;
    const part = `${body}${r > 0.9 ? "\r\n" : "\n"}`;
    parts.push(part);
    size += Buffer.byteLength(part);
  }
  return parts.join("");
}

/** Where a next URL continues: its offset, col and limit. */
function resumeOf(next: string | undefined) {
  if (!next) return undefined;
  const params = new URL(next).searchParams;
  return {
    line: Number(params.get("offset") ?? 1),
    col: Number(params.get("col") ?? 1),
    limit: params.has("limit") ? Number(params.get("limit")) : undefined,
  };
}

describe("/r of large files (paged by byte range)", () => {
  let t: TestBridge;
  let s: AgentSession;
  const mixed = Buffer.from(mixedText(3 * RANGED_READ_MIN_BYTES, 7));
  const read = (params: Params) => agentGet<Body>(url(s.r, "r", params));

  beforeAll(async () => {
    t = await startTestBridge({}, { extraTools: [coverageProbeTool] });
    const put = (name: string, content: Buffer | string) => fs.writeFileSync(path.join(t.projectDir, name), content);
    put("mixed.txt", mixed);
    put("bom.txt", Buffer.concat([UTF8_BOM, mixed]));
    put("utf16.txt", utf16("héllo wörld\n".repeat(RANGED_READ_MIN_BYTES / 8), false));
    put("latin1.txt", Buffer.concat([mixed, Buffer.from([0xe9, 0x0a])]));
    s = await t.session();
  });
  afterAll(async () => t.close());

  it.each([
    ["the first page", 1, 1, undefined, MAX_READ_BYTES],
    ["a page mid-file", 1500, 1, undefined, MAX_READ_BYTES],
    ["a 128 KiB page mid-file", 2500, 1, undefined, MAX_READ_MAX_BYTES],
    ["a line range", 1200, 1, 40, MAX_READ_BYTES],
    ["the line before a very long one", 3999, 1, undefined, MAX_READ_BYTES],
    ["a very long line's first part", 4000, 1, undefined, MAX_READ_BYTES],
    ["a very long line from a column", 4000, 5001, undefined, MAX_READ_BYTES],
    ["a very long line's last part", 4000, 319_990, undefined, MAX_READ_BYTES],
    ["a short line from a column", 3001, 2, 3, 512],
    ["the last lines", -3, 1, undefined, MAX_READ_BYTES],
  ] as Array<[string, number, number, number | undefined, number]>)(
    "cuts %s exactly as a whole-file read does",
    async (_name, from, col, limit, max) => {
      const index = indexLines(mixed);
      const offset = from > 0 ? from : index.starts.length + from;
      const reference = buildTextPage(mixed, { offset, col, limit, allowance: max }, index);
      const params: Params = [
        ["path", "mixed.txt"],
        ["offset", offset],
        ["max", max],
      ];
      if (col !== 1) params.push(["col", col]);
      if (limit !== undefined) params.push(["limit", limit]);
      const entry = (await read(params)).files[0]!;
      expect(entry).toMatchObject({
        content: reference.content,
        startLine: reference.startLine,
        endLine: reference.endLine,
        totalLines: reference.totalLines,
        rangeComplete: reference.complete,
        fingerprint: fingerprintOf(mixed),
        encoding: "utf-8",
        newline: "mixed",
      });
      expect(entry.splitLine).toBe(reference.splitLine);
      expect(resumeOf(entry.next)).toEqual(reference.resume);
    },
  );

  it.each([
    ["mixed.txt", mixed, "utf-8"],
    ["bom.txt", mixed, "utf-8-bom"],
  ])("reads %s through by next URLs to its exact text, and the reads cover it", async (name, text, encoding) => {
    const bytes = fs.readFileSync(path.join(t.projectDir, name));
    let body = await read([
      ["path", name],
      ["max", MAX_READ_MAX_BYTES],
    ]);
    const pages: string[] = [];
    for (;;) {
      expect(body.files[0]).toMatchObject({ fingerprint: fingerprintOf(bytes), encoding });
      pages.push(body.files[0]!.content);
      if (!body.next) break;
      body = await agentGet<Body>(body.next);
    }
    expect(pages.join("")).toBe(text.toString("utf8"));
    expect(pages.length).toBeGreaterThan(text.length / MAX_READ_MAX_BYTES);
    const coverage = await agentGet<{ complete: boolean }>(url(s.r, "cov", [["path", name]]));
    expect(coverage.complete).toBe(true);
  });

  it("pages a file over the whole-file cap, near its end", { timeout: 60_000 }, async () => {
    const line = (i: number) => `${String(i).padStart(8, "0")} ${"y".repeat(70)}\n`;
    const count = Math.ceil((MAX_TEXT_FILE_BYTES + RANGED_READ_MIN_BYTES) / line(0).length);
    const text = Array.from({ length: count }, (_, i) => line(i + 1)).join("");
    fs.writeFileSync(path.join(t.projectDir, "log.txt"), text);
    const body = await read([
      ["path", "log.txt"],
      ["offset", count - 2],
    ]);
    expect(body.files[0]).toMatchObject({
      content: line(count - 2) + line(count - 1) + line(count),
      startLine: count - 2,
      endLine: count,
      totalLines: count,
      complete: false,
      rangeComplete: true,
      fingerprint: fingerprintOf(Buffer.from(text)),
    });
    expect(body.next).toBeUndefined();
  });

  it("answers a page of a file changed since the last page with the new version's fingerprint", async () => {
    const first = Buffer.from(mixedText(2 * RANGED_READ_MIN_BYTES, 11));
    const file = path.join(t.projectDir, "changing.txt");
    fs.writeFileSync(file, first);
    const before = (await read([["path", "changing.txt"]])).files[0]!;
    expect(before.fingerprint).toBe(fingerprintOf(first));
    const second = Buffer.from(first);
    second.write("CHANGED", 0);
    fs.writeFileSync(file, second);
    const after = (await read([["path", "changing.txt"]])).files[0]!;
    expect(after.fingerprint).toBe(fingerprintOf(second));
    expect(after.content.startsWith("CHANGED")).toBe(true);
  });

  it("reads a large UTF-16 file and a large file that is not UTF-8 whole, as before", async () => {
    const utf16Body = await read([["path", "utf16.txt"]]);
    expect(utf16Body.files[0]).toMatchObject({
      encoding: "utf-16le",
      content: expect.stringMatching(/^héllo wörld\n/),
    });
    const latin1 = await read([
      ["path", "latin1.txt"],
      ["offset", indexLines(mixed).starts.length + 1],
    ]);
    expect(latin1.files[0]).toMatchObject({ invalidUtf8: true, content: "\ufffd\n" });
  });

  it("refuses a UTF-16 file over the whole-file cap with file_too_large", { timeout: 60_000 }, async () => {
    fs.writeFileSync(path.join(t.projectDir, "huge16.txt"), utf16("ab\n".repeat(MAX_TEXT_FILE_BYTES / 5), false));
    const body = await read([["path", "huge16.txt"]]);
    expect(body).toMatchObject({ ok: false, errorCode: "file_too_large" });
  });

  it("says which lines exist when offset= is past the end", async () => {
    const total = indexLines(mixed).starts.length;
    const body = await read([
      ["path", "mixed.txt"],
      ["offset", total + 1],
    ]);
    expect(body).toMatchObject({ ok: false, errorCode: "invalid_line_range" });
    const pastLine = await read([
      ["path", "mixed.txt"],
      ["offset", 4000],
      ["col", 320_002],
    ]);
    expect(pastLine).toMatchObject({
      ok: false,
      errorCode: "invalid_line_range",
      repairHint: expect.stringContaining("line 4000"),
    });
  });
});

describe("the large-file index cache", () => {
  const dir = makeTempDir("index-cache");
  const write = (name: string, text: string) => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, text);
    return file;
  };
  const withFd = async <T>(file: string, use: (fd: number) => Promise<T>) => {
    const fd = fs.openSync(file, "r");
    try {
      return await use(fd);
    } finally {
      fs.closeSync(fd);
    }
  };

  it("serves one version of a file from the cache and scans a changed one again", async () => {
    const cache = new LargeFileIndexCache(1 << 20, 0n);
    const file = write("a.txt", "one\ntwo\n");
    const first = await withFd(file, (fd) => cache.obtain(fd));
    const again = await withFd(file, (fd) => cache.obtain(fd));
    expect(first.kind).toBe("text");
    expect(again).toEqual(first);
    if (first.kind !== "text" || again.kind !== "text") return;
    expect(again.facts).toBe(first.facts);
    fs.writeFileSync(file, "ONE\ntwo\n");
    const changed = await withFd(file, (fd) => cache.obtain(fd));
    expect(changed.kind === "text" && changed.facts.fingerprint).toBe(fingerprintOf(Buffer.from("ONE\ntwo\n")));
  });

  it("keeps a file changed within the timestamp margin out of the cache", async () => {
    const cache = new LargeFileIndexCache(1 << 20);
    const file = write("racy.txt", "one\n");
    const first = await withFd(file, (fd) => cache.obtain(fd));
    const again = await withFd(file, (fd) => cache.obtain(fd));
    expect(first.kind === "text" && again.kind === "text" && again.facts !== first.facts).toBe(true);
    expect(cache.heldBytes).toBe(0);
  });

  it("evicts the least recently used index to stay within its bound", async () => {
    const lines = "x\n".repeat(1000);
    const cache = new LargeFileIndexCache(12_000, 0n);
    const files = ["e1.txt", "e2.txt", "e3.txt"].map((name) => write(name, lines));
    const scans = [];
    for (const file of files) scans.push(await withFd(file, (fd) => cache.obtain(fd)));
    expect(cache.heldBytes).toBeLessThanOrEqual(12_000);
    expect(cache.heldBytes).toBeGreaterThan(0);
    const last = await withFd(files[2]!, (fd) => cache.obtain(fd));
    expect(last.kind === "text" && scans[2]!.kind === "text" && last.facts === scans[2]!.facts).toBe(true);
    const firstAgain = await withFd(files[0]!, (fd) => cache.obtain(fd));
    expect(firstAgain.kind === "text" && scans[0]!.kind === "text" && firstAgain.facts !== scans[0]!.facts).toBe(true);
  });
});
