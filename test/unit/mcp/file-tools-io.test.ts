// The MCP file tools (edit, write, patch) are field renames and a renderer over the kernel (issue 26): their
// runtime import closure reaches no file-system module, so reading, matching and writing can only happen in
// the kernel's tools, the same for both transports. Type-only imports are erased and do not count.
import fs from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../../..");
/** Modules that do file I/O: Node's fs and our containment-checked file access. */
const FILE_IO = [
  /^node:fs(\/promises)?$/,
  /^fs$/,
  /server\/sandbox\/fd-(ops|walk)\.ts$/,
  /server\/mutation\/files\/atomic-write\.ts$/,
];

/** Runtime (not type-only) import and export-from specifiers of one module. */
function runtimeImports(file: string): string[] {
  const source = ts.createSourceFile(file, fs.readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  for (const node of source.statements) {
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      if (clause?.isTypeOnly) continue;
      const named = clause?.namedBindings;
      const onlyTypes =
        clause &&
        !clause.name &&
        named &&
        ts.isNamedImports(named) &&
        named.elements.length > 0 &&
        named.elements.every((e) => e.isTypeOnly);
      if (!onlyTypes) found.push((node.moduleSpecifier as ts.StringLiteral).text);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && !node.isTypeOnly) {
      found.push((node.moduleSpecifier as ts.StringLiteral).text);
    }
  }
  return found;
}

/** Every module reachable through runtime imports from `entry`: our files by path, packages by name. */
function closureOf(entry: string): Set<string> {
  const seen = new Set<string>();
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    if (!file.startsWith(ROOT)) continue;
    for (const spec of runtimeImports(file)) {
      if (spec.startsWith(".")) queue.push(path.resolve(path.dirname(file), spec).replace(/\.js$/, ".ts"));
      else seen.add(spec);
    }
  }
  return seen;
}

describe("MCP file tools", () => {
  it.each(["server/mcp/tools/files.ts", "server/mcp/tools/path-field.ts"])(
    "%s reaches no file-system module",
    (rel) => {
      const reached = [...closureOf(path.join(ROOT, rel))].map((m) =>
        m.startsWith(ROOT) ? path.relative(ROOT, m) : m,
      );
      expect(reached.filter((m) => FILE_IO.some((re) => re.test(m)))).toEqual([]);
      // The check sees through to the kernel types it renders, erased at run time.
      expect(reached).not.toContain("server/mutation/files/edit.ts");
    },
  );

  it("would see a file-system module behind a runtime import (the check can fail)", () => {
    const reached = [...closureOf(path.join(ROOT, "server/mutation/files/edit.ts"))].map((m) =>
      m.startsWith(ROOT) ? path.relative(ROOT, m) : m,
    );
    expect(reached).toContain("server/sandbox/fd-ops.ts");
  });
});
