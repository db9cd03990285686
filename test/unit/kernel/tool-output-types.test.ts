import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

// The compile-time half of "a renamed field breaks the build" (issue 11): CI runs vitest, not tsc, so this test runs
// the TypeScript compiler on fixture tools built with the real defineTool and asserts what it says. The fixtures are
// in memory, placed under test/ so they resolve zod and server/ as the real tools do; nothing is written to disk.

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const fixtureDir = path.join(repo, "test/unit/kernel/__output-types__");
const definitionImport = path.relative(fixtureDir, path.join(repo, "server/kernel/tool/definition.js"));

const fixtureHead = `import { z } from "zod";
import { defineTool } from "${definitionImport}";

const output = z.strictObject({
  ok: z.literal(true),
  name: z.string(),
  kind: z.enum(["file", "dir"]),
  size: z.number().optional(),
  entries: z.array(z.strictObject({ line: z.number(), text: z.string() })),
});

const common = {
  route: "x",
  longRoutes: [] as string[],
  capability: "read" as const,
  description: "fixture",
  example: "/x",
  url: {},
  schema: z.object({ path: z.string() }),
};
`;

/** Each execute returns what the schema declares, unannotated, as the real tools write it. */
const matching = `${fixtureHead}
export const syncTool = defineTool({
  ...common,
  id: "sync",
  output,
  execute(args) {
    return { ok: true, name: args.path, kind: "file", entries: [{ line: 1, text: "a" }] };
  },
});

export const asyncTool = defineTool({
  ...common,
  id: "async",
  output,
  async execute(args, ctx) {
    if (args.path === ctx.project.root) return { ok: true, name: args.path, kind: "dir", size: 0, entries: [] };
    return { ok: true, name: args.path, kind: "file", entries: [] };
  },
});

`;

/** The same tool whose result drifted: name renamed to title. */
const drifting = `${fixtureHead}
export const drifted = defineTool({
  ...common,
  id: "drifted",
  output,
  async execute(args) {
    return { ok: true, title: args.path, kind: "file", entries: [] };
  },
});
`;

/** A tool that declares no output schema at all: every tool must declare one. */
const undeclared = `${fixtureHead}
export const undeclared = defineTool({
  ...common,
  id: "undeclared",
  execute(args) {
    return { ok: true as const, anything: args.path };
  },
});
`;

const fixtures: Record<string, string> = {
  [path.join(fixtureDir, "undeclared.ts")]: undeclared,
  [path.join(fixtureDir, "matching.ts")]: matching,
  [path.join(fixtureDir, "drifting.ts")]: drifting,
};

/** Type-checks the fixtures with the project's compiler settings; returns each fixture's diagnostics as text. */
function compileFixtures(): Record<string, string[]> {
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ["lib.es2023.d.ts"],
    types: ["node"],
    strict: true,
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: false,
    skipLibCheck: true,
    noEmit: true,
  };
  const host = ts.createCompilerHost(options, true);
  const { fileExists, readFile, getSourceFile } = host;
  host.fileExists = (file) => file in fixtures || fileExists.call(host, file);
  host.readFile = (file) => fixtures[file] ?? readFile.call(host, file);
  host.getSourceFile = (file, language, onError, shouldCreate) => {
    const text = fixtures[file];
    return text !== undefined
      ? ts.createSourceFile(file, text, language, true)
      : getSourceFile.call(host, file, language, onError, shouldCreate);
  };
  const program = ts.createProgram(Object.keys(fixtures), options, host);
  const result: Record<string, string[]> = {};
  for (const file of Object.keys(fixtures)) {
    const source = program.getSourceFile(file)!;
    const diagnostics = [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)];
    result[path.basename(file)] = diagnostics.map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
  }
  return result;
}

describe("defineTool checks execute against the declared output at compile time", () => {
  const diagnostics = compileFixtures();

  it("compiles tools whose results match their output schema (enum literals included, no annotations)", () => {
    expect(diagnostics["matching.ts"]).toEqual([]);
  });

  it("fails to compile a tool whose result renamed a field, naming the field", () => {
    const messages = diagnostics["drifting.ts"]!;
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatch(/Property 'name' is missing/);
  });

  it("fails to compile a tool that declares no output schema", () => {
    const messages = diagnostics["undeclared.ts"]!;
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatch(/Property 'output' is missing/);
  });
});
