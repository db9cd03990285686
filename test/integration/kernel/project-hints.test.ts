// /p's hints for the first command: how the project runs its tests (per ecosystem, from its files) and the
// contributor/agent guides with their first lines, never a guide that links out of the project.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentGet, giveToAgent, makeTempDir, startTestBridge, type TestBridge } from "../../helpers/bridge.js";
import { writeTree } from "./fixtures.js";

type Body = Record<string, unknown> & { testCommands: Array<{ command: string; ecosystem: string; because: string }> };

describe("project (/p) hints", () => {
  let t: TestBridge;
  beforeAll(async () => {
    t = await startTestBridge();
  });
  afterAll(async () => t.close());

  it.each([
    [
      "python with pytest in pyproject",
      { "pyproject.toml": "[project]\nname='x'\n[tool.pytest.ini_options]\naddopts='-q'\n", "tests/test_a.py": "" },
      "python",
      /-m pytest -q$/,
      "pyproject.toml",
    ],
    [
      "python with only unittest files",
      { "setup.py": "", "tests/test_a.py": "" },
      "python",
      /-m unittest discover -v$/,
      "Python project files and test files, no pytest configuration",
    ],
    [
      "python with conftest.py",
      { "requirements.txt": "", "conftest.py": "" },
      "python",
      /-m pytest -q$/,
      "conftest.py",
    ],
    ["go", { "go.mod": "module x\n" }, "go", /^go test \.\/\.\.\.$/, "go.mod"],
    ["rust", { "Cargo.toml": "[package]\n" }, "rust", /^cargo test$/, "Cargo.toml"],
    [
      "node with yarn",
      { "package.json": JSON.stringify({ scripts: { test: "jest" } }), "yarn.lock": "" },
      "node",
      /^yarn test$/,
      "package.json scripts.test",
    ],
    ["java with the gradle wrapper", { "build.gradle": "", gradlew: "" }, "java", /^\.\/gradlew test$/, "build.gradle"],
    ["make", { Makefile: "build:\n\ttrue\ntest: build\n\ttrue\n" }, "make", /^make test$/, "Makefile target test"],
  ])("reports how a %s project runs its tests", async (_name, tree, ecosystem, command, because) => {
    const root = makeTempDir("project-tests");
    writeTree(root, tree as Record<string, string>);
    const body = await agentGet<Body>(`${(await t.session({ root })).r}/p`);
    expect(body.testCommands).toHaveLength(1);
    expect(body.testCommands[0]).toMatchObject({ ecosystem, because });
    expect(body.testCommands[0]!.command).toMatch(command);
  });

  it("reports no test command for an npm project whose test script is the npm init placeholder", async () => {
    const root = makeTempDir("project-no-tests");
    writeTree(root, {
      "package.json": JSON.stringify({ scripts: { test: 'echo "Error: no test specified" && exit 1' } }),
    });
    const body = await agentGet<Body>(`${(await t.session({ root })).r}/p`);
    expect(body.testCommands).toEqual([]);
  });

  it("surfaces AGENTS.md and CONTRIBUTING.md with their first lines and a read URL that works, never a guide linked out", async () => {
    const root = makeTempDir("project-guides");
    const outside = makeTempDir("project-guides-outside");
    fs.writeFileSync(path.join(outside, "secret.md"), "outside-secret guide");
    const agents = `# Agents\n\nRun \`pytest -q\` before you commit.\n${"More rules.\n".repeat(100)}`;
    writeTree(root, { "AGENTS.md": agents, ".github/CONTRIBUTING.md": "Be kind.\n" });
    fs.symlinkSync(path.join(outside, "secret.md"), path.join(root, "CONTRIBUTING.md"));
    const s = await t.session({ root });
    const body = await agentGet<
      Body & { guides: Array<{ path: string; bytes: number; head: string; truncated: boolean; read: string }> }
    >(`${s.r}/p`);
    expect(body.guides.map((g) => g.path)).toEqual(["/project/AGENTS.md", "/project/.github/CONTRIBUTING.md"]);
    expect(JSON.stringify(body)).not.toContain("outside-secret");
    const [first, second] = body.guides;
    expect(first).toMatchObject({ bytes: Buffer.byteLength(agents), truncated: true });
    expect(first!.head.startsWith("# Agents\n\nRun `pytest -q` before you commit.\n")).toBe(true);
    expect(first!.head.endsWith("\n")).toBe(true);
    expect(second).toMatchObject({ head: "Be kind.\n", truncated: false });
    const read = await agentGet<Record<string, unknown>>(first!.read);
    expect(read.ok).toBe(true);
    expect(JSON.stringify(read)).toContain("Run `pytest -q`");
  });
  it("offers, when the terminal is allowed, an exact run=@changed URL per test command, which runs the tests once per change", async () => {
    const root = makeTempDir("project-run");
    writeTree(root, { Makefile: "test:\n\t@echo tests-ran >> ran.log\n" });
    giveToAgent(root);
    const s = await t.session({ root, write: true, terminal: true });
    const body = await agentGet<Body & { testCommands: Array<{ run?: string }> }>(`${s.r}/p`);
    const run = body.testCommands[0]!.run!;
    expect(run).toContain("run=@changed");
    expect(await agentGet(run)).toMatchObject({ ok: true, state: "succeeded", exitCode: 0 });
    expect(await agentGet(run)).toMatchObject({ ok: true, dedupe: "replayed" });
    expect(fs.readFileSync(path.join(root, "ran.log"), "utf8")).toBe("tests-ran\n");
    const readOnly = await agentGet<Body & { testCommands: Array<{ run?: string }> }>(
      `${(await t.session({ root })).r}/p`,
    );
    expect(readOnly.testCommands[0]!.run).toBeUndefined();
  });
});
