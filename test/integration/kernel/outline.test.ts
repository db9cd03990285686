import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentGet, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";
import { url, utf16, writeTree } from "./fixtures.js";

type Body = Record<string, unknown> & { imports: unknown[]; declarations: Array<Record<string, unknown>> };

const TS_SOURCE = `import fs from "node:fs";
import { a as b, c } from "./m.js";
import * as path from "node:path";
import type { T } from "./types";
import "./side-effect";
export * from "./re";
export { x as y } from "./other";
import legacy = require("legacy");

/** Documented. */
@decorate()
export class Service extends Base implements I {
  static instances = 0;
  #secret = 1;
  constructor(private readonly dep: Dep) { super(); }
  get name(): string { return "s"; }
  set name(v: string) {}
  async start(): Promise<void> {}
  [key: string]: unknown;
}

export interface Options {
  port: number;
  connect(url: string): void;
}

export type Mode = "a" | "b";
export enum Color { Red, Green }
const enum Hidden { A }
declare module "ambient" { export function amb(): void; }
namespace Inner { export const v = 1; function local() {} }

export const limit = 5, handler = async (req: Req) => req;
const helper = function named() {};
let counter = 0;
export default Service;

export function overloaded(a: string): void;
export function overloaded(a: number): void;
export function overloaded(a: unknown) {}
`;

describe("outline (/o)", () => {
  let t: TestBridge;
  let s: AgentSession;
  const outline = (p: string) => agentGet<Body>(url(s.r, "o", [["path", p]]));

  beforeAll(async () => {
    t = await startTestBridge();
    writeTree(t.projectDir, {
      "src/service.ts": TS_SOURCE,
      "src/view.tsx": `import React from "react";\nexport function View(props: { n: number }) {\n  return <div>{props.n}</div>;\n}\nexport const Memo = React.memo(View);\n`,
      "lib/old.cjs": `const fs = require("fs");\nconst { join } = require("path");\nfunction read() {}\nmodule.exports = read;\nexports.extra = function () {};\n`,
      "lib/mod.mjs": `export async function* gen() {}\nexport class A { m() {} }\n`,
      "lib/comp.jsx": `export default function App() { return <p/>; }\n`,
      "lib/types.mts": `export type X = 1;\n`,
      "lib/legacy.cts": `export = 1;\n`,
      "lib/plain.js": `var a = 1;\nvar f = () => a;\n`,
      "lib/utf16.ts": utf16("export const wide = 1;\r\nexport function w() {}\r\n", false),
      "lib/ls.ts": "const s = '\u2028';\nexport function afterSeparator() {}\n",
      "README.md": "# readme\n",
      "blob.ts": Buffer.from([0x65, 0, 0x66]),
    });
    fs.writeFileSync(path.join(t.projectDir, "huge.ts"), `export const x = "${"x".repeat(2 * 1024 * 1024)}";\n`);
    writeTree(t.projectDir, {
      "wide.ts": Array.from({ length: 700 }, (_, i) => `export const v${i} = ${i};\n`).join(""),
    });
    s = await t.session();
  });
  afterAll(async () => t.close());

  it("lists imports and named declarations of TypeScript with their lines", async () => {
    const body = await outline("src/service.ts");
    expect(body).toMatchObject({
      ok: true,
      path: "/project/src/service.ts",
      language: "typescript",
      totalLines: 40,
      truncated: false,
    });
    expect(body.imports).toEqual([
      { line: 1, from: "node:fs", names: ["fs"] },
      { line: 2, from: "./m.js", names: ["a as b", "c"] },
      { line: 3, from: "node:path", names: ["* as path"] },
      { line: 4, from: "./types", names: ["T"], typeOnly: true },
      { line: 5, from: "./side-effect" },
      { line: 6, from: "./re", names: ["*"], reexport: true },
      { line: 7, from: "./other", names: ["x as y"], reexport: true },
      { line: 8, from: "legacy", names: ["legacy"] },
    ]);
    const byName = (name: string) => body.declarations.find((d) => d.name === name);
    expect(byName("Service")).toEqual({
      kind: "class",
      name: "Service",
      line: 11,
      endLine: 20,
      exported: true,
      members: [
        { kind: "property", name: "instances", line: 13, static: true },
        { kind: "property", name: "#secret", line: 14 },
        { kind: "constructor", name: "constructor", line: 15 },
        { kind: "getter", name: "name", line: 16 },
        { kind: "setter", name: "name", line: 17 },
        { kind: "method", name: "start", line: 18 },
        { kind: "index", name: "[index]", line: 19 },
      ],
    });
    expect(byName("Options")).toMatchObject({
      kind: "interface",
      line: 22,
      endLine: 25,
      members: [
        { kind: "property", name: "port", line: 23 },
        { kind: "method", name: "connect", line: 24 },
      ],
    });
    expect(byName("Mode")).toMatchObject({ kind: "type", line: 27, exported: true });
    expect(byName("Color")).toMatchObject({ kind: "enum", line: 28, exported: true });
    expect(byName("Hidden")).toMatchObject({ kind: "enum", line: 29 });
    expect(byName("ambient")).toMatchObject({
      kind: "namespace",
      line: 30,
      declarations: [{ kind: "function", name: "amb", line: 30, exported: true }],
    });
    expect(byName("Inner")).toMatchObject({
      kind: "namespace",
      declarations: [
        { kind: "const", name: "v", exported: true },
        { kind: "function", name: "local" },
      ],
    });
    expect(byName("limit")).toMatchObject({ kind: "const", line: 33, exported: true });
    expect(byName("handler")).toMatchObject({ kind: "function", line: 33, exported: true, async: true });
    expect(byName("helper")).toMatchObject({ kind: "function", line: 34 });
    expect(byName("counter")).toBeUndefined();
    expect(body.declarations.filter((d) => d.name === "overloaded").map((d) => d.line)).toEqual([38, 39, 40]);
    expect(body.declarations.find((d) => d.kind === "export-default")).toMatchObject({ name: "Service", line: 36 });
  });

  it.each([
    [
      "src/view.tsx",
      "tsx",
      [
        { kind: "function", name: "View", line: 2, endLine: 4 },
        { kind: "const", name: "Memo", line: 5 },
      ],
    ],
    [
      "lib/old.cjs",
      "javascript",
      [
        { kind: "function", name: "read", line: 3 },
        { kind: "export", name: "module.exports", line: 4 },
        { kind: "export", name: "extra", line: 5 },
      ],
    ],
    [
      "lib/mod.mjs",
      "javascript",
      [
        { kind: "function", name: "gen", line: 1, async: true },
        { kind: "class", name: "A", members: [{ kind: "method", name: "m", line: 2 }] },
      ],
    ],
    ["lib/comp.jsx", "jsx", [{ kind: "function", name: "App", default: true, exported: true }]],
    ["lib/types.mts", "typescript", [{ kind: "type", name: "X" }]],
    ["lib/legacy.cts", "typescript", [{ kind: "export=", line: 1 }]],
    ["lib/plain.js", "javascript", [{ kind: "function", name: "f", line: 2 }]],
    [
      "lib/utf16.ts",
      "typescript",
      [
        { kind: "const", name: "wide", line: 1 },
        { kind: "function", name: "w", line: 2 },
      ],
    ],
    ["lib/ls.ts", "typescript", [{ kind: "function", name: "afterSeparator", line: 2 }]],
  ])("outlines %s as %s", async (file, language, declarations) => {
    const body = await outline(file);
    expect(body).toMatchObject({ ok: true, language });
    expect(body.declarations).toMatchObject(declarations);
  });

  it("lists require() calls of CommonJS as imports", async () => {
    expect((await outline("lib/old.cjs")).imports).toEqual([
      { line: 1, from: "fs", names: ["fs"] },
      { line: 2, from: "path", names: ["join"] },
    ]);
  });

  it("bounds a very long outline and says so", async () => {
    const body = await outline("wide.ts");
    expect(body.truncated).toBe(true);
    expect(body.declarations.length).toBeLessThan(700);
    expect(body.notice).toMatch(/offset=/);
  });

  it("tells the agent to use /g (or /r) for other languages", async () => {
    const body = await outline("README.md");
    expect(body).toMatchObject({
      ok: false,
      errorCode: "unsupported_language",
      retryable: false,
      read: url(s.r, "r", [["path", "/project/README.md"]]),
    });
    expect(body.repairHint).toMatch(/\/g\?path=/);
  });

  it.each([
    ["a directory", "lib", "not_a_file"],
    ["a binary file", "blob.ts", "binary_file"],
    ["a file over the size limit", "huge.ts", "file_too_large"],
    ["a missing file", "nope.ts", "path_not_found"],
    ["a path outside the project", "../x.ts", "path_outside_root"],
  ])("refuses %s with %s", async (_name, p, code) => {
    expect(await outline(p)).toMatchObject({ ok: false, errorCode: code });
  });
});
