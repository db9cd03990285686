import path from "node:path";
import { describe, expect, it } from "vitest";
import { componentsBelow, joinBelow, lexicalTarget, VIRTUAL_ROOT } from "../../../server/sandbox/path-lexical.js";
import { pick, seededRandom } from "../../helpers/seeded-random.js";

// The spellings' answers before the plain-name shortcuts: path.resolve and path.join on every call.
function resolvedBefore(root: string, input: string): string {
  if (input === VIRTUAL_ROOT || input.startsWith(`${VIRTUAL_ROOT}/`)) return path.resolve(root, `.${input.slice(VIRTUAL_ROOT.length)}`);
  if (path.isAbsolute(input)) return path.resolve(input);
  return path.resolve(root, input);
}
function componentsBefore(root: string, lexical: string): string[] {
  if (lexical === root) return [];
  return lexical.slice(root.endsWith(path.sep) ? root.length : root.length + 1).split(path.sep).filter((c) => c !== "");
}

const ROOTS = ["/srv/project", "/", "/srv/project/", "/srv/./project", "/srv//project", "/srv/a/../project", "/srv/project name", "/p"];
const TRICKY = [
  "a.txt", "src/app.ts", "a/b/c", ".hidden", "..a", "a..", "...", "a/.../b", ".", "..", "./a", "a/.", "a/./b", "a/..", "a/../b", "../x",
  "a//b", "a/", "/", "//", "/etc/passwd", "/srv/project/a", "/srv/projectx", VIRTUAL_ROOT, `${VIRTUAL_ROOT}/`, `${VIRTUAL_ROOT}/a`,
  `${VIRTUAL_ROOT}/a/../..`, `${VIRTUAL_ROOT}//a`, `${VIRTUAL_ROOT}/a/`, `${VIRTUAL_ROOT}/.`, `${VIRTUAL_ROOT}x/a`, "a\\b", " a", "a b/c ", "~", "é/ü",
];
const PIECES = ["a", "b", ".", "..", "...", "..a", "/", "//", ".x", "x.", "\\", " ", VIRTUAL_ROOT, "é"];

function randomInputs(count: number): string[] {
  const rand = seededRandom(12);
  return Array.from({ length: count }, () => Array.from({ length: 1 + Math.floor(rand() * 7) }, () => pick(rand, PIECES)).join(""));
}

describe("lexicalTarget and componentsBelow answer what path.resolve did", () => {
  const inputs = [...TRICKY, ...randomInputs(3000)];
  it.each(ROOTS)("for every spelling below root %j", (root) => {
    for (const input of inputs) {
      const lexical = lexicalTarget(root, input);
      expect({ input, lexical }).toEqual({ input, lexical: resolvedBefore(root, input) });
      expect({ input, parts: componentsBelow(root, lexical) }).toEqual({ input, parts: componentsBefore(root, lexical) });
    }
  });

  it("takes the shortcut's answer only for names path.resolve leaves alone", () => {
    expect(lexicalTarget("/srv/project", "src/app.ts")).toBe("/srv/project/src/app.ts");
    expect(lexicalTarget("/srv/project", `${VIRTUAL_ROOT}/src/app.ts`)).toBe("/srv/project/src/app.ts");
    expect(lexicalTarget("/srv/project", "src/../../etc")).toBe("/srv/etc");
    expect(lexicalTarget("/", "a")).toBe("/a");
  });
});

describe("joinBelow answers what path.join does", () => {
  it.each(ROOTS)("below root %j", (root) => {
    const rand = seededRandom(34);
    const names = ["a", "b c", ".x", "...", "..a", "é", ".", "..", "", "a/b"];
    for (let i = 0; i < 2000; i++) {
      const parts = Array.from({ length: Math.floor(rand() * 5) }, () => pick(rand, names));
      expect({ parts, joined: joinBelow(root, parts) }).toEqual({ parts, joined: path.join(root, ...parts) });
    }
  });
});
