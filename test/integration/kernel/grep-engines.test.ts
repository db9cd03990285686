// ripgrep and the portable engine must give the same /g answers: two bridges over one project, one forced
// to each engine, asked the same questions.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentGet, makeTempDir, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";
import { url, utf16, UTF8_BOM, writeTree, type Params } from "./fixtures.js";

type Body = Record<string, unknown>;

function buildTree(root: string): void {
  writeTree(root, {
    ".gitignore": "*.log\nbuild/\n/secret.txt\n!important.log\n",
    ".env": "NEEDLE_TOKEN=needle\n",
    ".hidden/h.txt": "needle in a hidden folder\n",
    "src/.gitignore": "generated/\n*.gen.ts\n!keep.gen.ts\n",
    "src/a.ts": "const needle = 1;\nexport const x = needle + 2; // needle twice\nno match here\nnot a needle$\n",
    "src/b.js": "function needy() { return 'needle'; }\nNeedle capitalised\nNEEDLE shouting\n",
    "src/keep.gen.ts": "needle kept by negation\n",
    "src/drop.gen.ts": "needle dropped\n",
    "src/generated/x.ts": "needle in generated\n",
    "src/deep/nested/c.py": "needle = 'café'\nprint(needle)  \n",
    "src/deep/.gitignore": "*.tmp\n",
    "src/deep/scratch.tmp": "needle tmp\n",
    "build/out.js": "needle in build\n",
    "app.log": "needle in a log\n",
    "important.log": "needle important\n",
    "secret.txt": "needle secret at root\n",
    "docs/secret.txt": "needle secret in docs is not anchored away\n",
    "node_modules/pkg/index.js": "needle in node_modules\n",
    "vendor/.gitignore": "*\n",
    "vendor/lib.js": "needle vendored\n",
    "crlf.txt": "needle one\r\nneedle two\r\nthird needle\r\n",
    "cr-only.txt": "needle a\rneedle b\r",
    "bom.txt": Buffer.concat([UTF8_BOM, Buffer.from("needle after a BOM\n")]),
    "utf16le.txt": utf16("needle in UTF-16 LE\r\nzweite needle Zeile\r\n", false),
    "utf16be.txt": utf16("needle in UTF-16 BE\n", true),
    "binary.bin": Buffer.concat([
      Buffer.from("needle before NUL\n"),
      Buffer.from([0, 1, 2]),
      Buffer.from("\nneedle after\n"),
    ]),
    "late-binary.bin": Buffer.concat([
      Buffer.from("needle early\n"),
      Buffer.alloc(200_000, 0x61),
      Buffer.from("\n\0needle late\n"),
    ]),
    "latin1.txt": Buffer.from([0x6e, 0x65, 0x65, 0x64, 0x6c, 0x65, 0x20, 0x63, 0x61, 0x66, 0xe9, 0x0a]),
    "long.txt": `${"x".repeat(600)}needle${"y".repeat(600)}\n`,
    "unicode.txt": "ÉTÉ needle été\nΣίσυφος NEEDLE σίσυφος\nKelvin K and k\nnbsp\u00a0here\n",
    "regex.txt": "a.b(c) literal\nabc+def\nx{3}\nxxxx\n123 456\n tab\there\nword_word-word\n",
    "a.txt": "needle\n",
    "a-b.txt": "needle\n",
    "a/x.txt": "needle\n",
    "B.txt": "needle\n",
    "_u.txt": "needle\n",
    "ü.txt": "needle\n",
    "sub dir/space name.txt": "needle\n",
    "empty.txt": "",
  });
  fs.symlinkSync(path.join(root, "src", "a.ts"), path.join(root, "link.ts"));
  fs.symlinkSync(path.join(root, "src"), path.join(root, "linkdir"));
}

describe("ripgrep and the portable engine give identical /g results", () => {
  let rg: TestBridge;
  let fallback: TestBridge;
  let viaRg: AgentSession;
  let viaFallback: AgentSession;

  beforeAll(async () => {
    const root = makeTempDir("grep-engines");
    buildTree(root);
    rg = await startTestBridge({ URLBRIDGE_GREP_ENGINE: "rg" });
    fallback = await startTestBridge({ URLBRIDGE_GREP_ENGINE: "fallback" });
    viaRg = await rg.session({ root });
    viaFallback = await fallback.session({ root });
  });
  afterAll(async () => {
    await rg.close();
    await fallback.close();
  });

  async function both(params: Params, raw: string): Promise<[Body, Body]> {
    const [a, b] = await Promise.all([
      agentGet<Body>(url(viaRg.r, "g", params, raw)),
      agentGet<Body>(url(viaFallback.r, "g", params, raw)),
    ]);
    // URLs in hints differ only by bridge origin and capability.
    const normalise = (body: Body, base: string) => JSON.parse(JSON.stringify(body).split(base).join("<base>")) as Body;
    return [normalise(a, viaRg.r), normalise(b, viaFallback.r)];
  }

  const cases: Array<[string, Params, string]> = [
    ["literal over the whole tree", [], "needle"],
    ["literal, case-insensitive", [["ignoreCase", 1]], "NEEDLE"],
    ["a subdirectory", [["path", "src"]], "needle"],
    ["a nested subdirectory under two .gitignore files", [["path", "src/deep"]], "needle"],
    ["an ignored directory named explicitly", [["path", "build"]], "needle"],
    ["a directory ignored by its own rules", [["path", "vendor"]], "needle"],
    ["include by extension", [["include", "*.ts"]], "needle"],
    ["include with braces", [["include", "*.{ts,js,py}"]], "needle"],
    ["include by path", [["include", "src/**/*.py"]], "needle"],
    ["include never overrides .gitignore", [["include", "*.gen.ts"]], "needle"],
    ["include with an extglob", [["include", "+(a|b).ts"]], "needle"],
    ["ignored=1 searches everything", [["ignored", 1]], "needle"],
    ["regex alternation", [["regex", 1]], "need(?:le|y)"],
    ["regex anchors across CRLF", [["regex", 1]], "^needle [a-z]+$"],
    ["regex word boundary", [["regex", 1]], "\\bneedle\\b"],
    ["regex classes", [["regex", 1]], "\\d+\\s\\d+"],
    ["regex \\w stays ASCII", [["regex", 1]], "caf\\w"],
    // Not over latin1.txt: there rg's "." skips the invalid byte while JavaScript sees U+FFFD (documented).
    [
      "regex dot matches one character",
      [
        ["regex", 1],
        ["path", "src"],
      ],
      "caf.",
    ],
    ["regex dot in a file that is not UTF-8, literal part only", [["regex", 1]], "needle caf"],
    ["regex Unicode category", [["regex", 1]], "\\p{Lu}{3}"],
    [
      "regex case-insensitive with Kelvin sign",
      [
        ["regex", 1],
        ["ignoreCase", 1],
      ],
      "kelvin k",
    ],
    ["regex counted repetition", [["regex", 1]], "x{4}"],
    ["regex escaped punctuation", [["regex", 1]], "a\\.b\\(c\\)"],
    ["regex dollar at the end of a CRLF line", [["regex", 1]], "needle$"],
    ["literal with regex punctuation", [], "a.b(c)"],
    ["literal plus sign", [], "c+d"],
    ["literal tab", [], " tab\there"],
    ["unicode literal", [], "café"],
    ["unicode case folding", [["ignoreCase", 1]], "σίσυφος"],
    ["the match window on a long line", [["path", "long.txt"]], "needle"],
    [
      "one file named explicitly, UTF-16",
      [
        ["path", "utf16le.txt"],
        ["regex", 1],
      ],
      "ne+dle",
    ],
    ["one file inside an ignored directory", [["path", "build/out.js"]], "needle"],
    [
      "one file with include (ignored for a file)",
      [
        ["path", "src/a.ts"],
        ["include", "*.md"],
      ],
      "needle",
    ],
    ["bounded by limit", [["limit", 3]], "needle"],
    ["no match", [], "zebra crossing"],
    ["an invalid regex", [["regex", 1]], "(?=x)"],
  ];

  it.each(cases)("%s", async (_name, params, raw) => {
    const [a, b] = await both(params, raw);
    if (a.ok) {
      // A directory in which rg finds nothing to search (all of it ignored) is answered by the portable engine,
      // since rg cannot tell that apart from a folder swapped for a symlink as it started (ripgrep.ts).
      expect(a.engine).toBe(_name === "a directory ignored by its own rules" ? "fallback" : "rg");
      expect(b.engine).toBe("fallback");
    }
    // The range-replay snapshot id is random per response; the rest must match exactly.
    const { engine: _ea, rangeFallback: _ra, ...restA } = a;
    const { engine: _eb, rangeFallback: _rb, ...restB } = b;
    expect(restA).toEqual(restB);
  });

  it("answers the whole-tree search as a user expects", async () => {
    const [body] = await both([], "needle");
    const paths = (body.files as Array<{ path: string }>).map((f) => f.path);
    expect(paths).toEqual([
      "/project/.env",
      "/project/.hidden/h.txt",
      "/project/B.txt",
      "/project/_u.txt",
      "/project/a/x.txt",
      "/project/a-b.txt",
      "/project/a.txt",
      "/project/bom.txt",
      "/project/cr-only.txt",
      "/project/crlf.txt",
      "/project/docs/secret.txt",
      "/project/important.log",
      "/project/latin1.txt",
      "/project/long.txt",
      "/project/src/a.ts",
      "/project/src/b.js",
      "/project/src/deep/nested/c.py",
      "/project/src/keep.gen.ts",
      "/project/sub dir/space name.txt",
      "/project/unicode.txt",
      "/project/utf16be.txt",
      "/project/utf16le.txt",
      "/project/ü.txt",
    ]);
    const file = (p: string) =>
      (body.files as Array<{ path: string; lines: Array<{ line: number; text: string }> }>).find((f) => f.path === p)!;
    expect(file("/project/crlf.txt").lines).toEqual([
      { line: 1, text: "needle one" },
      { line: 2, text: "needle two" },
      { line: 3, text: "third needle" },
    ]);
    expect(file("/project/cr-only.txt").lines).toEqual([{ line: 1, text: "needle a\rneedle b\r" }]);
    expect(file("/project/bom.txt").lines).toEqual([{ line: 1, text: "needle after a BOM" }]);
    expect(file("/project/utf16le.txt").lines).toEqual([
      { line: 1, text: "needle in UTF-16 LE" },
      { line: 2, text: "zweite needle Zeile" },
    ]);
    expect(file("/project/latin1.txt").lines).toEqual([{ line: 1, text: "needle caf\ufffd" }]);
    expect(file("/project/long.txt").lines[0]).toMatchObject({ line: 1, col: 601, clipped: true });
  });
});
