// The folder browser's "New folder" (issue 32): POST /api/fs makes one folder inside the browse roots, owned by the
// agents' identity, so a project on it takes write and terminal without a host shell for mkdir and chown.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTempDir, startTestBridge, TEST_AGENT_UID, type TestBridge } from "../../helpers/bridge.js";

interface Listing {
  path: string;
  directories: Array<{ name: string; path: string }>;
  created: string;
}
type Failure = { error: { code: string; message: string } };

const asRoot = process.getuid?.() === 0;

describe("POST /api/fs: a new folder in the folder browser", () => {
  let t: TestBridge;
  let browseRoot: string;

  beforeAll(async () => {
    // Root-owned, as Docker makes ./projects when nobody created it first: a new folder must still be the agents'.
    browseRoot = fs.realpathSync(makeTempDir("new-folder-root"));
    fs.chmodSync(browseRoot, 0o755);
    t = await startTestBridge({ URLBRIDGE_BROWSE_ROOTS: browseRoot });
  });
  afterAll(async () => t.close());

  it("creates the folder, answers the parent's new listing, and the folder belongs to the agents", async () => {
    const made = await t.api<Listing>("POST", "/api/fs", { path: browseRoot, name: "demo" });
    expect(made.status).toBe(201);
    expect(made.body.created).toBe(path.join(browseRoot, "demo"));
    expect(made.body.directories.map((d) => d.name)).toContain("demo");
    if (asRoot) expect(fs.statSync(made.body.created).uid).toBe(TEST_AGENT_UID);
  });

  it.skipIf(!asRoot)("lets a project on it take write and terminal with no chown on the host", async () => {
    const project = await t.api("POST", "/api/projects", {
      name: "made-in-browser",
      root: path.join(browseRoot, "demo"),
      permissions: { write: true, terminal: true },
    });
    expect(project.status).toBe(201);
  });

  it.each([
    [{ name: "demo" }, 409, "folder_exists"],
    [{ name: "../escape" }, 400, "invalid_path"],
    [{ name: ".." }, 400, "invalid_path"],
    [{ name: "bad\nname" }, 400, "invalid_path"],
  ])("refuses %j with %i %s", async (body, status, code) => {
    const result = await t.api<Failure>("POST", "/api/fs", { path: browseRoot, ...body });
    expect(result.status).toBe(status);
    expect(result.body.error.code).toBe(code);
    expect(fs.existsSync(path.join(path.dirname(browseRoot), "escape"))).toBe(false);
  });

  it("refuses a parent outside the browse roots", async () => {
    const outside = makeTempDir("not-a-browse-root");
    const result = await t.api<Failure>("POST", "/api/fs", { path: outside, name: "x" });
    expect(result.status).toBe(403);
    expect(result.body.error.code).toBe("outside_browse_roots");
    expect(fs.existsSync(path.join(outside, "x"))).toBe(false);
  });
});
