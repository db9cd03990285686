// The server starts however its entry script is named: through a symlinked checkout path too (issue 16: it
// used to load, run nothing and exit 0, because argv[1] and import.meta.url differ by the link).
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { isEntryPoint } from "../../server/entry-point.js";
import { makeTempDir } from "../helpers/bridge.js";
import { killServerProcesses, startServerProcess } from "../helpers/server-process.js";

const REPO = path.resolve(import.meta.dirname, "../..");

afterEach(killServerProcesses);

describe("server entry point", () => {
  it("serves when started through a symlink to the checkout", async () => {
    const link = path.join(makeTempDir("link"), "checkout");
    fs.symlinkSync(REPO, link);
    const server = await startServerProcess({
      stateDir: makeTempDir("state"),
      entry: path.join(link, "server", "main.ts"),
    });
    const health = await fetch(`${server.controlUrl}/api/health`);
    expect(health.status).toBe(200);
  });

  it("compares real paths: the same file through a link is the entry point, another file is not", () => {
    const dir = makeTempDir("entry");
    const file = path.join(dir, "main.js");
    fs.writeFileSync(file, "");
    fs.symlinkSync(dir, path.join(dir, "..", `${path.basename(dir)}-link`));
    const viaLink = path.join(dir, "..", `${path.basename(dir)}-link`, "main.js");
    expect(isEntryPoint(pathToFileURL(file).href, viaLink)).toBe(true);
    expect(isEntryPoint(pathToFileURL(file).href, path.join(dir, "other.js"))).toBe(false);
    expect(isEntryPoint(pathToFileURL(file).href, undefined)).toBe(false);
    fs.rmSync(viaLink.replace(/\/main\.js$/, ""));
  });
});
