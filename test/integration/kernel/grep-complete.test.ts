// /g searches everything it says it searched: a file over 8 MiB is streamed (not skipped), a binary file with a
// match is named in `skipped`, and ripgrep running in parallel still answers in one deterministic path order,
// the same as the portable engine and with the same count as rg itself.
import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentGet, makeTempDir, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";
import { url, writeTree, type Params } from "./fixtures.js";

type Body = Record<string, unknown> & {
  files: Array<{ path: string; lines: Array<{ line: number; text: string }> }>;
  matchedLines: number;
  skipped?: Array<{ path: string; reason: string; searchUrl?: string }>;
};

const BIG_LINES = 180_000;
/** Lines of big.js that hold the needle: near the start, around the 8 MiB mark and at the very end. */
const BIG_HITS = [3, 100_000, 150_001, 170_000, BIG_LINES];

function bigFile(): string {
  const lines: string[] = [];
  for (let i = 1; i <= BIG_LINES; i++)
    lines.push(BIG_HITS.includes(i) ? `const zebu${i} = "needle at ${i}";` : `const filler${i} = ${"x".repeat(40)};`);
  return `${lines.join("\r\n")}\r\n`;
}

describe("/g is complete and deterministic", () => {
  let root: string;
  let rg: TestBridge;
  let fallback: TestBridge;
  let viaRg: AgentSession;
  let viaFallback: AgentSession;

  beforeAll(async () => {
    root = makeTempDir("grep-complete");
    const files: Record<string, string | Buffer> = {
      "lib/big.js": bigFile(),
      "bin/data.bin": Buffer.concat([Buffer.from("header\0"), Buffer.from("a needle in binary\n")]),
      "bin/plain.bin": Buffer.from("no match\0here\n"),
      // One line too long to carry (over 16 MiB) that matches, and one that does not.
      "wide/minified.js": `${"m".repeat(17 * 1024 * 1024)} needle at the end\nneedle on line 2\n`,
      "wide/plain.js": `${"q".repeat(17 * 1024 * 1024)}\n`,
    };
    // Many small files in many folders, so that rg's threads finish them in varying order.
    for (let d = 0; d < 12; d++)
      for (let f = 0; f < 12; f++) files[`src/d${d}/f${f}.ts`] = `// ${f % 3 === 0 ? "needle" : "hay"} ${d}/${f}\n`;
    writeTree(root, files);
    rg = await startTestBridge({ URLBRIDGE_GREP_ENGINE: "rg" });
    fallback = await startTestBridge({ URLBRIDGE_GREP_ENGINE: "fallback" });
    viaRg = await rg.session({ root, terminal: true });
    viaFallback = await fallback.session({ root, terminal: true });
  });
  afterAll(async () => {
    await rg.close();
    await fallback.close();
  });

  const grep = (s: AgentSession, params: Params, raw: string) => agentGet<Body>(url(s.r, "g", params, raw));
  const normalise = (body: Body, s: AgentSession) =>
    JSON.parse(JSON.stringify(body).split(s.r).join("<r>").split(s.m!).join("<m>")) as Body;

  it("streams a file over 8 MiB and counts what rg counts", async () => {
    const body = await grep(viaRg, [["limit", 500]], "needle");
    const big = body.files.find((f) => f.path === "/project/lib/big.js")!;
    expect(big.lines.map((l) => l.line)).toEqual(BIG_HITS);
    expect(big.lines.at(-1)!.text).toBe(`const zebu${BIG_LINES} = "needle at ${BIG_LINES}";`);
    // rg itself, plain: text files only (its default quits a binary file at the NUL before this match); wide/ is
    // left out, since /g names its overlong line's file instead of showing lines.
    const plain = execFileSync("rg", ["--no-config", "-c", "--no-filename", "-g", "!wide/", "needle", "."], {
      cwd: root,
      encoding: "utf8",
    });
    const rgCount = plain
      .trim()
      .split("\n")
      .reduce((n, line) => n + Number(line), 0);
    expect(body.matchedLines).toBe(rgCount);
    expect(body.truncated).toBe(false);
  });

  it.each([
    ["the whole tree", [["limit", 500]]],
    ["bounded by limit across files", [["limit", 7]]],
    ["the big file named in path=", [["path", "lib/big.js"]]],
    [
      "a regex over the tree",
      [
        ["regex", 1],
        ["limit", 500],
      ],
    ],
  ] as Array<[string, Params]>)("answers %s the same with both engines", async (_name, params) => {
    const pattern = params.some(([k]) => k === "regex") ? "needle (at|in) \\w+" : "needle";
    const [a, b] = await Promise.all([grep(viaRg, params, pattern), grep(viaFallback, params, pattern)]);
    expect(a.engine).toBe("rg");
    expect(b.engine).toBe("fallback");
    // The range-replay snapshot id is random per response; the rest must match exactly.
    const { engine: _a, rangeFallback: _ra, ...restA } = normalise(a, viaRg);
    const { engine: _b, rangeFallback: _rb, ...restB } = normalise(b, viaFallback);
    expect(restA).toEqual(restB);
  });

  it("names a binary file and a file with an overlong line that hold a match, with a way to search them", async () => {
    const body = await grep(viaRg, [["limit", 500]], "needle");
    expect(body.skipped).toEqual([
      { path: "/project/bin/data.bin", reason: "binary", searchUrl: expect.stringContaining("/x?raw=rg") },
      { path: "/project/wide/minified.js", reason: "long_line", searchUrl: expect.stringContaining("/x?raw=rg") },
    ]);
    expect(body.files.map((f) => f.path)).not.toContain("/project/bin/data.bin");
    expect(body.notice).toMatch(/2 file\(s\) hold a match but show no lines/);
    const search = await agentGet<Record<string, unknown>>(body.skipped![0]!.searchUrl!);
    expect(search).toMatchObject({ ok: true, exitCode: 0 });
    expect(String(search.stdout)).toContain("a needle in binary");
  });

  it("gives the same answer every time, whatever order rg's threads finish in", async () => {
    const answers = await Promise.all(Array.from({ length: 4 }, () => grep(viaRg, [["limit", 30]], "needle")));
    const stable = (body: Body) => JSON.stringify({ ...body, rangeFallback: undefined });
    for (const answer of answers) expect(stable(answer)).toBe(stable(answers[0]!));
    const paths = answers[0]!.files.map((f) => f.path);
    expect(paths.slice(0, 3)).toEqual(["/project/lib/big.js", "/project/src/d0/f0.ts", "/project/src/d0/f3.ts"]);
    expect(paths).toContain("/project/src/d10/f0.ts");
    expect(paths.indexOf("/project/src/d10/f0.ts")).toBeLessThan(paths.indexOf("/project/src/d2/f0.ts"));
  });
});
