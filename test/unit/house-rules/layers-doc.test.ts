// docs/ARCHITECTURE.md's layer table is the layer list dependency-cruiser enforces (scripts/layers.cjs).
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const { LAYERS } = createRequire(import.meta.url)(path.join(REPO, "scripts/layers.cjs")) as {
  LAYERS: Array<{ name: string; paths: string[] }>;
};

function documentedLayers(): Array<{ name: string; paths: string[] }> {
  const doc = fs.readFileSync(path.join(REPO, "docs/ARCHITECTURE.md"), "utf8");
  const start = doc.indexOf("Layers, as the checker reads them");
  expect(start, "ARCHITECTURE.md names its layer table").toBeGreaterThan(-1);
  const rows = doc
    .slice(start)
    .split("\n")
    .slice(1)
    .filter((line, i, all) => line.startsWith("|") && all.slice(0, i).every((l) => l === "" || l.startsWith("|")));
  return rows.slice(2).map((row) => {
    const [name, paths] = row
      .split("|")
      .slice(1, 3)
      .map((cell) => cell.trim());
    return { name: name!, paths: paths!.split(",").map((p) => p.trim()) };
  });
}

describe("the layering of ARCHITECTURE.md", () => {
  it("is the checker's configuration, layer by layer and path by path", () => {
    expect(documentedLayers()).toEqual(LAYERS);
  });

  it("places every top-level folder and file of server/", () => {
    const placed = new Set(LAYERS.flatMap((l) => l.paths));
    const entries = fs
      .readdirSync(path.join(REPO, "server"), { withFileTypes: true })
      .map((e) => (e.isDirectory() ? `${e.name}/` : e.name));
    expect(entries.filter((e) => !placed.has(e))).toEqual([]);
  });
});
