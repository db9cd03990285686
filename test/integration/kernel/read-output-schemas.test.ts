import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createReadTools } from "../../../server/kernel/index.js";
import { MAX_OUTLINE_ENTRIES, MAX_PROJECT_SCRIPTS, MAX_READ_BYTES } from "../../../server/kernel/limits.js";
import type { AnyToolDefinition } from "../../../server/kernel/tool/definition.js";
import { agentGet, makeTempDir, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";
import { url, utf16, UTF8_BOM, writeTree, type Params } from "./fixtures.js";

// Every main result shape of every read tool, answered by the real bridge, parses with the tool's declared output
// schema. The schemas are strict, so a field the tool answers and the schema does not declare fails here too.

const tools = new Map(createReadTools().map((tool) => [tool.id, tool]));
const ROUTE_OF: Record<string, string> = { read: "r", find: "f", grep: "g", outline: "o", stat: "t", project: "p" };

const TS_SOURCE = `import fs from "node:fs";
import { a as b } from "./m.js";
import type { T } from "./types";
import "./side-effect";
export * from "./re";
const legacy = require("legacy");

export class Service {
  static count = 0;
  constructor(private readonly dep: T) {}
  get name(): string { return "s"; }
  async start(): Promise<void> {}
  [key: string]: unknown;
}
export interface Options { verbose?: boolean; (x: number): void; new (): Options }
export type Mode = "a" | "b";
export enum Level { Low, High }
export namespace Outer { export namespace Inner { export const deep = 1; } export function f() {} }
export const handler = async () => {};
export let counter = 0;
export { fs as fileSystem };
export default function () {}
module.exports.extra = 1;
`;

/** The gateway's envelope in front of a body larger than one range part; not part of the tool's answer. */
function withoutEnvelope(body: Record<string, unknown>): Record<string, unknown> {
  const { rangeFallback: _fallback, ...answer } = body;
  return answer;
}

describe("read tool answers match their declared output schemas", () => {
  let t: TestBridge;
  let s: AgentSession;
  let outside: string;

  async function call(tool: string, params: Params = [], raw?: string): Promise<Record<string, unknown>> {
    return withoutEnvelope(await agentGet(url(s.r, ROUTE_OF[tool]!, params, raw)));
  }

  /** Parses strictly with the tool's schema and returns the parsed answer, which must equal what was sent. */
  function parsed(tool: string, body: Record<string, unknown>): Record<string, unknown> {
    const definition: AnyToolDefinition = tools.get(tool)!;
    const result = definition.output!.safeParse(body);
    if (!result.success)
      throw new Error(
        `${tool} answer does not match its output schema: ${result.error.message}\n${JSON.stringify(body).slice(0, 2000)}`,
      );
    expect(result.data).toEqual(body);
    return result.data;
  }

  beforeAll(async () => {
    t = await startTestBridge();
    outside = makeTempDir("outside");
    fs.writeFileSync(path.join(outside, "secret.txt"), "secret\n");
    writeTree(t.projectDir, {
      "src/app.ts": TS_SOURCE,
      "src/util.js": "exports.helper = function () {};\nmodule.exports = {};\n",
      "src/long.txt": `${"a".repeat(500)} needle ${"b".repeat(500)}\n`,
      "big.txt": Array.from({ length: 1000 }, (_, i) => `${String(i + 1).padStart(5, "0")} ${"x".repeat(60)}\n`).join(
        "",
      ),
      "big2.txt": "y".repeat(80).concat("\n").repeat(600),
      // Longer than the default page (64 KiB).
      "long-line.txt": `${"é😀abc".repeat(8000)}\nafter\n`,
      "empty.txt": "",
      "latin1.txt": Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]),
      "bom.txt": Buffer.concat([UTF8_BOM, Buffer.from("héllo\nwörld\n")]),
      "le.txt": utf16("héllo\r\nwörld 😀\r\n", false),
      "image.png": Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]),
      "dir/a.txt": "ay\n",
      "dir/b.txt": "bee\n",
      "dir/sub/c.txt": "see\n",
      "many.ts": Array.from({ length: MAX_OUTLINE_ENTRIES + 20 }, (_, i) => `export const v${i} = ${i};\n`).join(""),
      "pnpm-lock.yaml": "lockfileVersion: 9\n",
      ".gitignore": "ignored/\n",
      "ignored/hidden.txt": "bee\n",
    });
    fs.symlinkSync(path.join(t.projectDir, "src"), path.join(t.projectDir, "dir", "link"));
    fs.symlinkSync(path.join(outside, "secret.txt"), path.join(t.projectDir, "escape-file"));
    fs.mkdirSync(path.join(t.projectDir, "many"));
    for (let i = 0; i < 620; i++)
      fs.writeFileSync(path.join(t.projectDir, "many", `f${String(i).padStart(4, "0")}.txt`), "x");
    s = await t.session();
  });
  afterAll(async () => t.close());

  describe("read (/r)", () => {
    it.each<[string, Params, (body: Record<string, unknown>) => void]>([
      [
        "a whole text file",
        [["path", "src/app.ts"]],
        (b) => expect(b).toMatchObject({ allComplete: true, files: [{ kind: "file", complete: true }] }),
      ],
      [
        "a paged file with a next URL",
        [["path", "big.txt"]],
        (b) =>
          expect(b).toMatchObject({
            allComplete: false,
            next: expect.any(String),
            files: [{ kind: "file", complete: false }],
          }),
      ],
      [
        "a line range",
        [
          ["path", "big.txt"],
          ["offset", 10],
          ["limit", 5],
        ],
        (b) =>
          expect(b).toMatchObject({ files: [{ startLine: 10, endLine: 14, complete: false, rangeComplete: true }] }),
      ],
      [
        "a split line",
        [["path", "long-line.txt"]],
        (b) =>
          expect(b).toMatchObject({
            files: [{ splitLine: 1, splitNotice: expect.any(String), next: expect.any(String) }],
          }),
      ],
      [
        "invalid UTF-8",
        [["path", "latin1.txt"]],
        (b) => expect(b).toMatchObject({ files: [{ invalidUtf8: true, notice: expect.any(String) }] }),
      ],
      ["a UTF-8 BOM", [["path", "bom.txt"]], (b) => expect(b).toMatchObject({ files: [{ encoding: "utf-8-bom" }] })],
      [
        "UTF-16 LE with CRLF",
        [["path", "le.txt"]],
        (b) => expect(b).toMatchObject({ files: [{ encoding: "utf-16le", newline: "crlf" }] }),
      ],
      [
        "an empty file",
        [["path", "empty.txt"]],
        (b) => expect(b).toMatchObject({ files: [{ totalLines: 0, endLine: 0, newline: "none", content: "" }] }),
      ],
      [
        "a directory",
        [["path", "dir"]],
        (b) =>
          expect(b).toMatchObject({
            files: [
              {
                kind: "dir",
                complete: true,
                entries: expect.arrayContaining([
                  { name: "link", kind: "symlink" },
                  { name: "sub", kind: "dir" },
                ]),
              },
            ],
          }),
      ],
      [
        "a paged directory",
        [["path", "many"]],
        (b) => expect(b).toMatchObject({ files: [{ kind: "dir", complete: false, next: expect.any(String) }] }),
      ],
      [
        "a binary file",
        [["path", "image.png"]],
        (b) => expect(b).toMatchObject({ files: [{ kind: "binary", complete: true }] }),
      ],
      [
        "several paths with failures and several stopping short",
        [
          ["path", "dir/a.txt"],
          ["path", "nope.txt"],
          ["path", "escape-file"],
          ["path", "big.txt"],
          ["path", "big2.txt"],
          ["path", "image.png"],
        ],
        (b) => {
          expect(b).toMatchObject({
            notice: expect.any(String),
            unreturnedPaths: ["/project/nope.txt", "escape-file"],
          });
          expect(b.failures).toMatchObject([
            { errorCode: "path_not_found", find: expect.any(String) },
            { errorCode: "symlink_escape" },
          ]);
        },
      ],
    ])("%s", async (_name, params, check) => {
      const body = await call("read", params);
      check(body);
      parsed("read", body);
    });

    it("a continuation page of a split line (startCol)", async () => {
      const first = await call("read", [["path", "long-line.txt"]]);
      const body = withoutEnvelope(await agentGet(first.next as string));
      expect(body).toMatchObject({ files: [{ startCol: expect.any(Number) }] });
      parsed("read", body);
    });

    it("the byte budget is what pages a file (the paged case above really is paged by size)", async () => {
      const body = await call("read", [["path", "big.txt"]]);
      const [entry] = body.files as Array<{ content: string }>;
      expect(Buffer.byteLength(entry!.content)).toBeLessThanOrEqual(MAX_READ_BYTES);
    });

    it("is strict: an undeclared field fails the parse", async () => {
      const body = await call("read", [["path", "src/app.ts"]]);
      expect(tools.get("read")!.output!.safeParse({ ...body, extra: 1 }).success).toBe(false);
      const files = body.files as Array<Record<string, unknown>>;
      expect(tools.get("read")!.output!.safeParse({ ...body, files: [{ ...files[0], lines: 3 }] }).success).toBe(false);
    });
  });

  describe("find (/f)", () => {
    it.each<[string, Params, (body: Record<string, unknown>) => void]>([
      [
        "a name search finding a directory and a symlink",
        [["name", "i"]],
        (b) =>
          expect(b.results).toEqual(
            expect.arrayContaining([
              { path: "/project/dir", kind: "dir" },
              { path: "/project/dir/link", kind: "symlink" },
            ]),
          ),
      ],
      [
        "a content search with lines",
        [["query", "bee"]],
        (b) =>
          expect(b).toMatchObject({ query: "bee", results: [{ path: "/project/dir/b.txt", kind: "file", line: 1 }] }),
      ],
      [
        "a glob, not recursive",
        [
          ["include", "*.txt"],
          ["recursive", "0"],
        ],
        (b) => expect(b).toMatchObject({ include: "*.txt", recursive: false }),
      ],
      [
        "nothing found",
        [["name", "no-such-name"]],
        (b) => expect(b).toMatchObject({ count: 0, results: [], truncated: false, notice: expect.any(String) }),
      ],
      [
        "truncated by limit",
        [
          ["name", "t"],
          ["limit", 1],
        ],
        (b) => expect(b).toMatchObject({ count: 1, truncated: true, notice: expect.any(String) }),
      ],
      [
        "ignored paths included",
        [
          ["query", "bee"],
          ["ignored", "1"],
        ],
        (b) => expect(b.count).toBe(2),
      ],
    ])("%s", async (_name, params, check) => {
      const body = await call("find", params);
      check(body);
      parsed("find", body);
    });
  });

  describe("grep (/g)", () => {
    it.each<[string, Params, string, (body: Record<string, unknown>) => void]>([
      [
        "matches in a directory",
        [["path", "src"]],
        "export",
        (b) =>
          expect(b).toMatchObject({
            regex: false,
            truncated: false,
            files: expect.arrayContaining([expect.objectContaining({ path: "/project/src/app.ts" })]),
          }),
      ],
      [
        "one file, ignoring case",
        [
          ["path", "src/app.ts"],
          ["ignoreCase", "1"],
        ],
        "EXPORT",
        (b) => expect(b).toMatchObject({ ignoreCase: true }),
      ],
      [
        "a regex with include",
        [
          ["regex", "1"],
          ["include", "*.ts"],
        ],
        "^export (const|let) \\w+",
        (b) => expect(b).toMatchObject({ regex: true, include: "*.ts" }),
      ],
      [
        "a long line shown as a window",
        [["path", "src/long.txt"]],
        "needle",
        (b) => expect(b).toMatchObject({ files: [{ lines: [{ line: 1, col: 502, clipped: true }] }] }),
      ],
      [
        "truncated by limit",
        [["limit", "1"]],
        "e",
        (b) => expect(b).toMatchObject({ matchedLines: 1, truncated: true, notice: expect.any(String) }),
      ],
      [
        "no match, with the regex and ignored hints",
        [],
        "zz.*qq",
        (b) =>
          expect(b).toMatchObject({
            matchedLines: 0,
            files: [],
            notice: expect.any(String),
            regexUrl: expect.any(String),
            ignoredUrl: expect.any(String),
          }),
      ],
      [
        "no match in one file",
        [
          ["path", "dir/a.txt"],
          ["ignoreCase", "1"],
        ],
        "nothing",
        (b) => expect(b).toMatchObject({ matchedLines: 0, notice: expect.any(String) }),
      ],
    ])("%s", async (_name, params, pattern, check) => {
      const body = await call("grep", params, pattern);
      check(body);
      parsed("grep", body);
    });
  });

  describe("outline (/o)", () => {
    it.each<[string, string, (body: Record<string, unknown>) => void]>([
      ["a TypeScript file", "src/app.ts", (b) => expect(b).toMatchObject({ language: "typescript", truncated: false })],
      [
        "a CommonJS file",
        "src/util.js",
        (b) =>
          expect(b).toMatchObject({ language: "javascript", declarations: [{ kind: "export" }, { kind: "export" }] }),
      ],
      [
        "a file past the entry bound",
        "many.ts",
        (b) => expect(b).toMatchObject({ truncated: true, notice: expect.any(String) }),
      ],
    ])("%s", async (_name, file, check) => {
      const body = await call("outline", [["path", file]]);
      check(body);
      parsed("outline", body);
    });

    it("nested namespace declarations and members are covered", async () => {
      const body = parsed("outline", await call("outline", [["path", "src/app.ts"]]));
      const declarations = body.declarations as Array<Record<string, unknown>>;
      expect(declarations.find((d) => d.name === "Outer")).toMatchObject({
        kind: "namespace",
        declarations: [{ kind: "namespace", declarations: [{ kind: "const" }] }, { kind: "function" }],
      });
      expect(declarations.find((d) => d.name === "Service")).toMatchObject({
        members: expect.arrayContaining([{ kind: "property", name: "count", line: 9, static: true }]),
      });
    });
  });

  describe("stat (/t)", () => {
    it.each<[string, string, Record<string, unknown>]>([
      ["a file", "src/app.ts", { exists: true, kind: "file" }],
      ["a directory", "dir", { exists: true, kind: "dir" }],
      ["a missing path", "nope.txt", { exists: false }],
    ])("%s", async (_name, file, expected) => {
      const body = await call("stat", [["path", file]]);
      expect(body).toMatchObject(expected);
      parsed("stat", body);
    });
  });

  describe("project (/p)", () => {
    it.each<[string, string | undefined, (body: Record<string, unknown>) => void]>([
      [
        "without package.json",
        undefined,
        (b) => expect(b).toMatchObject({ packageManager: "pnpm", notice: expect.any(String) }),
      ],
      [
        "with a package.json and scripts past the bound",
        JSON.stringify({
          name: "demo",
          version: "1.0.0",
          type: "module",
          packageManager: "pnpm@9.0.0",
          engines: { node: ">=20" },
          workspaces: ["packages/*"],
          scripts: Object.fromEntries(Array.from({ length: MAX_PROJECT_SCRIPTS + 1 }, (_, i) => [`s${i}`, "echo"])),
        }),
        (b) => expect(b.packageJson).toMatchObject({ name: "demo", scriptsTruncated: MAX_PROJECT_SCRIPTS + 1 }),
      ],
      [
        "with an invalid package.json",
        "{ not json",
        (b) => expect(b.packageJson).toEqual({ error: expect.any(String) }),
      ],
    ])("%s", async (_name, packageJson, check) => {
      const file = path.join(t.projectDir, "package.json");
      if (packageJson === undefined) fs.rmSync(file, { force: true });
      else fs.writeFileSync(file, packageJson);
      const body = await call("project");
      check(body);
      parsed("project", body);
    });
  });
});
