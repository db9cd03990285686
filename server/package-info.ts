// Where the bridge's code sits and which release it is: the package root, its version and the image's build id.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
/** Repository (or image) root: server/ in development, dist/server/ when built. */
export const PACKAGE_ROOT = [path.resolve(here, ".."), path.resolve(here, "..", "..")].find((p) =>
  fs.existsSync(path.join(p, "package.json")),
)!;

export function packageVersion(): string {
  return (JSON.parse(fs.readFileSync(path.join(PACKAGE_ROOT, "package.json"), "utf8")) as { version: string }).version;
}

/** Where an image build records its content hash (Dockerfile; scripts/image-tag.mjs). */
export const BUILD_ID_FILE = path.join("dist", "BUILD_ID");

/** The content hash the image was built from, or "source" when the bridge runs from a checkout. */
export function buildId(): string {
  try {
    return fs.readFileSync(path.join(PACKAGE_ROOT, BUILD_ID_FILE), "utf8").trim() || "source";
  } catch {
    return "source";
  }
}
