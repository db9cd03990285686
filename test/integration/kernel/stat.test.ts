import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentGet, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";
import { url, writeTree } from "./fixtures.js";

describe("stat (/t)", () => {
  let t: TestBridge;
  let s: AgentSession;
  const stat = (p: string) => agentGet<Record<string, unknown>>(url(s.r, "t", [["path", p]]));

  beforeAll(async () => {
    t = await startTestBridge();
    writeTree(t.projectDir, { "src/app.ts": "export {};\n" });
    fs.chmodSync(path.join(t.projectDir, "src/app.ts"), 0o640);
    fs.symlinkSync(path.join(t.projectDir, "src"), path.join(t.projectDir, "link"));
    s = await t.session();
  });
  afterAll(async () => t.close());

  it("describes a file without reading it, with the same kind names as /r and /f", async () => {
    const body = await stat("src/app.ts");
    expect(body).toMatchObject({
      ok: true,
      path: "/project/src/app.ts",
      exists: true,
      kind: "file",
      size: 11,
      mode: "0640",
    });
    expect(body.modified).toBe(fs.statSync(path.join(t.projectDir, "src/app.ts")).mtime.toISOString());
  });

  it.each([
    ["src", { kind: "dir", path: "/project/src" }],
    ["link", { kind: "dir", path: "/project/src" }],
    ["/project", { kind: "dir", path: "/project" }],
    ["missing.txt", { exists: false, path: "/project/missing.txt" }],
  ])("describes %j", async (p, expected) => {
    expect(await stat(p)).toMatchObject({ ok: true, ...expected });
  });

  it("takes file= as an alias", async () => {
    expect(await agentGet(url(s.r, "t", [["file", "src/app.ts"]]))).toMatchObject({ ok: true, kind: "file" });
  });
});
