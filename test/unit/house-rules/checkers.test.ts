// npm test's lint step fails on each kind of house-rule break: every checker runs here on a small fixture,
// through its own API and with this repository's configuration, and must refuse it (issue 33, "Must show").
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { cruise, type ICruiseOptions, type IViolation } from "dependency-cruiser";
import { ESLint } from "eslint";
import * as prettier from "prettier";
import { afterAll, describe, expect, it } from "vitest";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const THIS_FILE = fileURLToPath(import.meta.url);
const require = createRequire(import.meta.url);

describe("Prettier (npm run lint:format)", () => {
  it("refuses a badly formatted module and accepts its formatted text", async () => {
    const filepath = path.join(REPO, "server/fixture.ts");
    const options = { ...(await prettier.resolveConfig(filepath)), filepath };
    const bad = "export const  answer = {a:1,\n b:2}\n";
    expect(await prettier.check(bad, options)).toBe(false);
    const good = await prettier.format(bad, options);
    expect(good).toBe("export const answer = { a: 1, b: 2 };\n");
    expect(await prettier.check(good, options)).toBe(true);
  });

  it("wraps at the house width of 120 characters", async () => {
    const filepath = path.join(REPO, "server/fixture.ts");
    const options = { ...(await prettier.resolveConfig(filepath)), filepath };
    const long = `export const call = f(${Array.from({ length: 12 }, (_, i) => `"argument-${i}"`).join(", ")});\n`;
    expect(long.length).toBeGreaterThan(120);
    expect(await prettier.check(long, options)).toBe(false);
    const lines = (await prettier.format(long, options)).split("\n");
    expect(Math.max(...lines.map((l) => l.length))).toBeLessThanOrEqual(120);
  });
});

// Type-aware linting starts a TypeScript program: seconds on a loaded 2-core machine, more than the 5 s default.
describe("ESLint (npm run lint:code)", { timeout: 300_000 }, () => {
  // The text is linted as if it were this test file: a file of the type-aware program, under the real config.
  // Under CI=true typescript-eslint infers a single run and types the file as it is on disk, not the text given
  // here; the override keeps the linted text and its types the same thing wherever the test runs.
  const lint = async (code: string) => {
    const eslint = new ESLint({
      cwd: REPO,
      overrideConfig: { languageOptions: { parserOptions: { disallowAutomaticSingleRunInference: true } } },
    });
    const [result] = await eslint.lintText(code, { filePath: THIS_FILE });
    return result!.messages.map((m) => m.ruleId);
  };

  it("refuses a floating promise", async () => {
    const rules = await lint("async function save(): Promise<void> {}\nexport function run(): void {\n  save();\n}\n");
    expect(rules).toContain("@typescript-eslint/no-floating-promises");
  });

  it("refuses an unused value and an await of a non-promise", async () => {
    const rules = await lint(
      "export async function run(): Promise<number> {\n  const unused = 1;\n  return await 2;\n}\n",
    );
    expect(rules).toEqual(
      expect.arrayContaining(["@typescript-eslint/no-unused-vars", "@typescript-eslint/await-thenable"]),
    );
  });

  it("refuses a product module past 400 lines", async () => {
    const eslint = new ESLint({
      cwd: REPO,
      overrideConfig: { languageOptions: { parserOptions: { disallowAutomaticSingleRunInference: true } } },
    });
    const body = Array.from({ length: 401 }, (_, i) => `export const value${i} = ${i};`).join("\n") + "\n";
    // A file of the type-aware program under server/: the config's files pattern is what decides.
    const [result] = await eslint.lintText(body, { filePath: path.join(REPO, "server/config.ts") });
    expect(result!.messages.map((m) => m.ruleId)).toContain("max-lines");
  });

  it("accepts the same code once the promise is handled", async () => {
    const rules = await lint(
      "async function save(): Promise<void> {}\nexport async function run(): Promise<void> {\n  await save();\n}\n",
    );
    expect(rules).toEqual([]);
  });
});

describe("dependency-cruiser (npm run lint:deps)", { timeout: 120_000 }, () => {
  const config = require(path.join(REPO, ".dependency-cruiser.cjs")) as {
    forbidden: NonNullable<ICruiseOptions["ruleSet"]>["forbidden"];
  };
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

  /** Cruises a fixture tree of server/ modules (name -> text) under the repository's rules. */
  const violationsOf = async (files: Record<string, string>): Promise<IViolation[]> => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "urlbridge-layers-"));
    dirs.push(dir);
    for (const [name, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      fs.writeFileSync(path.join(dir, name), text);
    }
    const previous = process.cwd();
    process.chdir(dir);
    try {
      const result = await cruise(["server"], {
        ruleSet: { forbidden: config.forbidden },
        validate: true,
        tsPreCompilationDeps: true,
      });
      if (typeof result.output === "string") throw new Error(result.output);
      return result.output.summary.violations;
    } finally {
      process.chdir(previous);
    }
  };

  it("refuses a foundation that imports the kernel, even for a type", async () => {
    const violations = await violationsOf({
      "server/kernel/tool/definition.ts": "export interface Permissions { write: boolean }\n",
      "server/store/projects.ts":
        'import type { Permissions } from "../kernel/tool/definition";\nexport const none: Permissions = { write: false };\n',
    });
    expect(violations.map((v) => [v.rule.name, v.from, v.to])).toEqual([
      ["layer-foundations", "server/store/projects.ts", "server/kernel/tool/definition.ts"],
    ]);
  });

  it("refuses the kernel importing the journal, and the MCP edge importing the gateway", async () => {
    const violations = await violationsOf({
      "server/mutation/journal/journal-runner.ts": "export const runner = 1;\n",
      "server/kernel/tool/run-tool.ts":
        'import { runner } from "../../mutation/journal/journal-runner";\nexport const r = runner;\n',
      "server/gateway/respond.ts": "export const send = 1;\n",
      "server/mcp/http.ts": 'import { send } from "../gateway/respond";\nexport const s = send;\n',
    });
    expect(violations.map((v) => v.rule.name).sort()).toEqual(["edges-apart", "layer-kernel"]);
  });

  it("refuses a runtime cycle and a module outside every layer", async () => {
    const violations = await violationsOf({
      "server/sandbox/fd-walk.ts": 'import { near } from "./closest-paths";\nexport const walk = () => near;\n',
      "server/sandbox/closest-paths.ts": 'import { walk } from "./fd-walk";\nexport const near = () => walk;\n',
      "server/elsewhere/thing.ts": 'import { walk } from "../sandbox/fd-walk";\nexport const t = walk;\n',
    });
    expect(new Set(violations.map((v) => v.rule.name))).toEqual(new Set(["no-cycle", "in-a-layer"]));
  });

  it("accepts imports that point down the layers", async () => {
    const violations = await violationsOf({
      "server/store/projects.ts": "export interface Permissions { write: boolean }\n",
      "server/kernel/tool/definition.ts": 'export type { Permissions } from "../../store/projects";\n',
      "server/tool/run-tool.ts":
        'import type { Permissions } from "../kernel/tool/definition";\nexport type P = Permissions;\n',
    });
    expect(violations).toEqual([]);
  });
});
