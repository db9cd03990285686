// scripts/image-tag.mjs run as the operator runs it (a child process): the content hash covers exactly the build
// context's files, so identical content gives the identical tag and any change to an input gives a new one.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { makeTempDir } from "../../helpers/bridge.js";

const SCRIPT = path.resolve(import.meta.dirname, "..", "..", "..", "scripts", "image-tag.mjs");
const run = (context: string, command: string) =>
  execFileSync(process.execPath, [SCRIPT, command, "--context", context], { encoding: "utf8" }).trim();

function writeTree(root: string, files: Record<string, string>): void {
  for (const [rel, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), content);
  }
}

describe("image-tag.mjs", () => {
  let context: string;
  beforeEach(() => {
    context = makeTempDir("image-context");
    writeTree(context, {
      "package.json": JSON.stringify({ name: "urlbridge", version: "9.8.7" }),
      "package-lock.json": "{}",
      Dockerfile: "FROM scratch\n",
      "server/main.ts": "export {};\n",
      "web/src/app.vue": "<template/>\n",
    });
  });

  it("tags urlbridge:<version>-<12 hex digits>, the same for the same content in another folder", () => {
    const tag = run(context, "tag");
    expect(tag).toMatch(/^urlbridge:9\.8\.7-[0-9a-f]{12}$/);
    expect(tag.endsWith(`-${run(context, "hash")}`)).toBe(true);
    const copy = makeTempDir("image-context-copy");
    fs.cpSync(context, copy, { recursive: true });
    expect(run(copy, "tag")).toBe(tag);
  });

  it.each([
    ["a source file", "server/main.ts", "export const changed = 1;\n"],
    ["the lockfile", "package-lock.json", '{"lockfileVersion":3}'],
    ["the Dockerfile", "Dockerfile", "FROM scratch\nLABEL x=y\n"],
    ["a new file in a built folder", "native/extra.c", "int x;\n"],
  ])("changes when %s changes", (_what, rel, content) => {
    const before = run(context, "hash");
    writeTree(context, { [rel]: content });
    expect(run(context, "hash")).not.toBe(before);
  });

  it.each([
    ["node_modules", "server/node_modules/x/index.js"],
    ["dist", "web/dist/index.html"],
    ["a log file", "server/debug.log"],
    ["an .env file", "server/.env"],
    ["a folder the image does not build from", "docs/GUIDE.md"],
  ])("ignores %s, which never enters the build context", (_what, rel) => {
    const before = run(context, "hash");
    writeTree(context, { [rel]: "anything\n" });
    expect(run(context, "hash")).toBe(before);
  });
});
