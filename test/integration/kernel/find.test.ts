import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentGet, makeTempDir, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";
import { url, writeTree, type Params } from "./fixtures.js";

type Hit = { path: string; kind: string; size?: number; line?: number };
type Body = Record<string, unknown> & { results: Hit[]; count: number; truncated: boolean };

describe("find (/f)", () => {
  let t: TestBridge;
  let s: AgentSession;
  const find = (params: Params) => agentGet<Body>(url(s.r, "f", params));
  const paths = (body: Body) => body.results.map((r) => r.path);

  beforeAll(async () => {
    t = await startTestBridge();
    const outside = makeTempDir("outside");
    fs.writeFileSync(path.join(outside, "Config.secret.ts"), "SECRET_TOKEN\n");
    writeTree(t.projectDir, {
      ".gitignore": "*.log\ncoverage/\n",
      "src/.gitignore": "generated/\n",
      "src/Config.ts": "export const config = { port: 8080 };\n// SECRET_TOKEN is read from env\n",
      "src/config/index.ts": "export * from './defaults';\n",
      "src/config/defaults.ts": "export const defaults = {};\n",
      "src/generated/config.gen.ts": "generated config\n",
      "src/app.tsx": "import { config } from './Config';\n",
      "docs/CONFIGURATION.md": "# Configuration\nport 8080\n",
      "debug.log": "config log\n",
      "coverage/config.html": "<html>config</html>\n",
      "node_modules/config-lib/index.js": "module.exports = {};\n",
      ".git/config": "[core]\n",
      "image.bin": Buffer.from([0x63, 0x6f, 0x6e, 0x66, 0x69, 0x67, 0, 0]),
      "ÜBER.txt": "über config\n",
    });
    for (let i = 0; i < 30; i++) writeTree(t.projectDir, { [`bulk/item-${String(i).padStart(2, "0")}.txt`]: "bulk\n" });
    fs.symlinkSync(outside, path.join(t.projectDir, "outside-link"));
    s = await t.session();
  });
  afterAll(async () => t.close());

  it("finds files and directories whose name contains the text, case-insensitively, recursively", async () => {
    const body = await find([["name", "CONFIG"]]);
    expect(body).toMatchObject({ ok: true, path: "/project", name: "CONFIG", recursive: true, truncated: false });
    expect(body.results).toEqual([
      { path: "/project/docs/CONFIGURATION.md", kind: "file", size: 26 },
      { path: "/project/src/Config.ts", kind: "file", size: 71 },
      { path: "/project/src/config", kind: "dir" },
    ]);
  });

  it("matches non-ASCII names case-insensitively", async () => {
    expect(paths(await find([["name", "über"]]))).toEqual(["/project/ÜBER.txt"]);
  });

  it("matches against the path when name= holds a /", async () => {
    expect(paths(await find([["name", "config/def"]]))).toEqual(["/project/src/config/defaults.ts"]);
  });

  it("looks one level deep with recursive=0 and everywhere with recursive=1", async () => {
    expect(
      paths(
        await find([
          ["path", "src"],
          ["recursive", 0],
        ]),
      ),
    ).toEqual(["/project/src/.gitignore", "/project/src/Config.ts", "/project/src/app.tsx", "/project/src/config"]);
    expect(
      paths(
        await find([
          ["path", "src"],
          ["recursive", 1],
          ["name", "defaults"],
        ]),
      ),
    ).toEqual(["/project/src/config/defaults.ts"]);
  });

  it("finds files containing text with query=, giving the first line that has it", async () => {
    const body = await find([["query", "8080"]]);
    expect(body.results).toEqual([
      { path: "/project/docs/CONFIGURATION.md", kind: "file", size: 26, line: 2 },
      { path: "/project/src/Config.ts", kind: "file", size: 71, line: 1 },
    ]);
  });

  it("matches query= exactly unless ignoreCase=1", async () => {
    expect(paths(await find([["query", "secret_token"]]))).toEqual([]);
    expect(
      paths(
        await find([
          ["query", "secret_token"],
          ["ignoreCase", 1],
        ]),
      ),
    ).toEqual(["/project/src/Config.ts"]);
  });

  it("combines name=, include= and query=", async () => {
    expect(paths(await find([["include", "*.ts"]]))).toEqual([
      "/project/src/Config.ts",
      "/project/src/config/defaults.ts",
      "/project/src/config/index.ts",
    ]);
    expect(
      paths(
        await find([
          ["include", "*.{ts,tsx}"],
          ["query", "config"],
        ]),
      ),
    ).toEqual(["/project/src/Config.ts", "/project/src/app.tsx"]);
    expect(
      paths(
        await find([
          ["name", "index"],
          ["include", "src/**"],
        ]),
      ),
    ).toEqual(["/project/src/config/index.ts"]);
  });

  it("skips binary files for query=", async () => {
    expect(
      paths(
        await find([
          ["query", "config"],
          ["name", "image"],
        ]),
      ),
    ).toEqual([]);
  });

  it("skips .gitignore'd paths (nested files too), .git and node_modules unless ignored=1", async () => {
    const hidden = [
      "/project/.git/config",
      "/project/coverage/config.html",
      "/project/node_modules/config-lib",
      "/project/src/generated/config.gen.ts",
    ];
    const normal = paths(await find([["name", "config"]]));
    for (const p of hidden) expect(normal).not.toContain(p);
    const all = paths(
      await find([
        ["name", "config"],
        ["ignored", 1],
      ]),
    );
    for (const p of hidden) expect(all).toContain(p);
    expect(
      paths(
        await find([
          ["name", "debug"],
          ["ignored", 1],
        ]),
      ),
    ).toEqual(["/project/debug.log"]);
  });

  it("says what was skipped when nothing matched", async () => {
    const body = await find([["name", "debug.log"]]);
    expect(body).toMatchObject({ count: 0, results: [] });
    expect(body.notice).toMatch(/ignored=1/);
  });

  it("says name= is not a glob when one that looks like a glob matched nothing, with the include= URL that is", async () => {
    const body = await find([
      ["name", "*.tsx"],
      ["path", "src"],
    ]);
    expect(body).toMatchObject({ count: 0, results: [] });
    expect(body.notice).toMatch(/not a glob/);
    expect(body.notice).toMatch(/ignored=1/);
    const repaired = await agentGet<Body>(String(body.includeUrl));
    expect(paths(repaired)).toEqual(["/project/src/app.tsx"]);
    // With ignored=1 too, only the glob part is said; with include= already given, nothing about globs.
    expect(
      (
        await find([
          ["name", "*.tsx"],
          ["ignored", 1],
        ])
      ).notice,
    ).not.toMatch(/ignored=1/);
    const both = await find([
      ["name", "*"],
      ["include", "*.md"],
    ]);
    expect(both.includeUrl).toBeUndefined();
    expect(both.notice ?? "").not.toMatch(/not a glob/);
  });

  it("bounds the results and says so", async () => {
    const body = await find([
      ["path", "bulk"],
      ["limit", 5],
    ]);
    expect(body).toMatchObject({ count: 5, truncated: true });
    expect(paths(body)).toEqual([0, 1, 2, 3, 4].map((i) => `/project/bulk/item-0${i}.txt`));
    expect(body.notice).toMatch(/limit=/);
  });

  it("continues a truncated search exactly with next, page by page, in walk order", async () => {
    const whole = paths(
      await find([
        ["name", "i"],
        ["limit", 1000],
      ]),
    );
    expect(whole.length).toBeGreaterThan(30);
    let body = await find([
      ["name", "i"],
      ["limit", 7],
    ]);
    const seen = [...paths(body)];
    let gets = 1;
    while (body.truncated && gets < 20) {
      expect(body.next, JSON.stringify(body)).toBeTypeOf("string");
      body = await agentGet<Body>(body.next as string);
      expect(body.ok, JSON.stringify(body)).toBe(true);
      seen.push(...paths(body));
      gets++;
    }
    expect(body.next).toBeUndefined();
    expect(seen).toEqual(whole);
    expect(gets).toBe(Math.ceil(whole.length / 7));
  });

  it("carries every filter into next (query, path, include, ignoreCase)", async () => {
    const first = await find([
      ["query", "BULK"],
      ["ignoreCase", 1],
      ["path", "bulk"],
      ["include", "*.txt"],
      ["limit", 3],
    ]);
    expect(first).toMatchObject({ count: 3, truncated: true });
    const second = await agentGet<Body>(first.next as string);
    expect(paths(second)).toEqual([3, 4, 5].map((i) => `/project/bulk/item-0${i}.txt`));
    expect(second.results[0]).toMatchObject({ line: 1 });
  });

  it("continues after a directory hit into that directory's entries", async () => {
    writeTree(t.projectDir, {
      "nest/nest-a/nest-b.txt": "b\n",
      "nest/nest-a/other.txt": "o\n",
      "nest/nest-c.txt": "c\n",
    });
    const all = [
      "/project/nest",
      "/project/nest/nest-a",
      "/project/nest/nest-a/nest-b.txt",
      "/project/nest/nest-c.txt",
    ];
    expect(paths(await find([["name", "nest"]]))).toEqual(all);
    let body = await find([
      ["name", "nest"],
      ["limit", 1],
    ]);
    const seen = [...paths(body)];
    for (let gets = 1; body.next && gets < 10; gets++) {
      body = await agentGet<Body>(body.next as string);
      seen.push(...paths(body));
    }
    expect(seen).toEqual(all);
  });

  it("never walks through a symlink out of the project", async () => {
    expect(paths(await find([["query", "SECRET_TOKEN"]]))).toEqual(["/project/src/Config.ts"]);
    expect(paths(await find([["name", "outside"]]))).toEqual(["/project/outside-link"]);
    expect(await find([["path", "outside-link"]])).toMatchObject({ ok: false, errorCode: "symlink_escape" });
  });

  it.each([
    ["a file as path", [["path", "src/Config.ts"]], "not_a_directory"],
    ["a missing path", [["path", "nope"]], "path_not_found"],
    ["traversal", [["path", "../.."]], "path_outside_root"],
    ["an empty name", [["name", ""]], "invalid_parameter"],
    ["recursive=yes", [["recursive", "yes"]], "invalid_parameter"],
    ["an unknown parameter", [["nam", "x"]], "unknown_parameter"],
  ] as Array<[string, Params, string]>)("refuses %s with %s", async (_name, params, code) => {
    expect(await find(params)).toMatchObject({ ok: false, errorCode: code });
  });
});
