// Issue 26 Build 1/2: server/mcp/ is a translation over the kernel and does no file I/O. No module under it
// imports the file system, a database or a process launcher, directly; since every module under it is checked,
// none reaches one through another module of server/mcp either. Type-only imports (erased at build) are allowed.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const MCP_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../server/mcp");
/** Modules that touch the file system (or run what does). */
const FORBIDDEN = /^(node:)?(fs|fs\/promises|child_process)$|^better-sqlite3$/;
/** Value imports of the bridge's own I/O layers: the store (SQLite) and the sandbox's spawner. */
const FORBIDDEN_OWN = /\/(store|sandbox)\//;

/**
 * Modules that still do file I/O, each with why and where it goes. The list must match exactly: a new offender
 * fails, and so does one that was fixed (remove it here). None is left: MCP read's images come from the kernel's
 * read (image=1, server/kernel/read/image.ts).
 */
const KNOWN_FILE_IO: Record<string, string> = {};

function modulesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return modulesUnder(full);
    return entry.name.endsWith(".ts") ? [full] : [];
  });
}

/** Every module a source file loads at run time: static imports and re-exports that are not type-only, and dynamic import(). */
export function runtimeImportsOf(source: string): string[] {
  const found: string[] = [];
  const statements = /(?:^|\n)\s*(import|export)\s+(type\s+)?([^;]*?)\s+from\s+["']([^"']+)["']/g;
  for (const m of source.matchAll(statements)) {
    if (m[2]) continue;
    // `import { type A, type B } from` is erased too.
    const names = m[3]!
      .replace(/^\{|\}$/g, "")
      .split(",")
      .map((n) => n.trim())
      .filter(Boolean);
    if (m[3]!.startsWith("{") && names.length > 0 && names.every((n) => n.startsWith("type "))) continue;
    found.push(m[4]!);
  }
  for (const m of source.matchAll(/(?:^|\n)\s*import\s+["']([^"']+)["']/g)) found.push(m[1]!);
  for (const m of source.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g)) found.push(m[1]!);
  return found;
}

describe("server/mcp/ does no file I/O", () => {
  const modules = modulesUnder(MCP_DIR);

  it("finds the MCP modules", () => {
    expect(modules.length).toBeGreaterThan(15);
  });

  it.each(
    modules.filter((m) => !(path.relative(MCP_DIR, m) in KNOWN_FILE_IO)).map((m) => [path.relative(MCP_DIR, m), m]),
  )("%s imports no file system, database or process module", (_name, file) => {
    const imports = runtimeImportsOf(fs.readFileSync(file, "utf8"));
    expect(imports.filter((spec) => FORBIDDEN.test(spec))).toEqual([]);
    expect(imports.filter((spec) => spec.startsWith(".") && FORBIDDEN_OWN.test(spec))).toEqual([]);
  });

  it("lists exactly the modules that still do file I/O", () => {
    const offenders = modules
      .filter((file) =>
        runtimeImportsOf(fs.readFileSync(file, "utf8")).some(
          (spec) => FORBIDDEN.test(spec) || (spec.startsWith(".") && FORBIDDEN_OWN.test(spec)),
        ),
      )
      .map((file) => path.relative(MCP_DIR, file));
    expect(offenders.sort()).toEqual(Object.keys(KNOWN_FILE_IO).sort());
  });

  it("reads imports the way the checks above rely on", () => {
    const source = [
      'import fs from "node:fs";',
      'import type { A } from "../store/x.js";',
      'import { type B, type C } from "../store/y.js";',
      'export { D } from "fs/promises";',
      'const m = await import("better-sqlite3");',
    ].join("\n");
    expect(runtimeImportsOf(source)).toEqual(["node:fs", "fs/promises", "better-sqlite3"]);
  });
});
