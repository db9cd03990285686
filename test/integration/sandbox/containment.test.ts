import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentGet, makeTempDir, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";

describe("path containment through the gateway", () => {
  let t: TestBridge;
  let s: AgentSession;
  let outside: string;

  beforeAll(async () => {
    t = await startTestBridge();
    outside = makeTempDir("outside");
    fs.writeFileSync(path.join(outside, "secret.txt"), "secret");
    fs.mkdirSync(path.join(t.projectDir, "src"));
    fs.writeFileSync(path.join(t.projectDir, "src", "app.ts"), "export {}\n");
    fs.symlinkSync(path.join(outside, "secret.txt"), path.join(t.projectDir, "file-link"));
    fs.symlinkSync(outside, path.join(t.projectDir, "dir-link"));
    fs.symlinkSync(path.join(t.projectDir, "src"), path.join(t.projectDir, "inner-link"));
    fs.symlinkSync(path.join(outside, "not-yet"), path.join(t.projectDir, "dangling-out"));
    s = await t.session();
  });
  afterAll(async () => t.close());

  const stat = (p: string) => agentGet<Record<string, unknown>>(`${s.r}/t?path=${encodeURIComponent(p)}`);

  it.each([
    ["src/app.ts", "/project/src/app.ts"],
    ["./src/../src/app.ts", "/project/src/app.ts"],
    ["/project/src/app.ts", "/project/src/app.ts"],
    ["/project", "/project"],
    [".", "/project"],
    ["inner-link/app.ts", "/project/src/app.ts"],
  ])("accepts %j and shows it as %j", async (input, display) => {
    const r = await stat(input);
    expect(r).toMatchObject({ ok: true, path: display, exists: true });
  });

  it("accepts a native absolute path inside the root", async () => {
    const r = await stat(path.join(t.projectDir, "src", "app.ts"));
    expect(r).toMatchObject({ ok: true, path: "/project/src/app.ts" });
    expect(JSON.stringify(r)).not.toContain(t.projectDir);
  });

  it.each([
    ["../secret.txt", "path_outside_root"],
    ["src/../../x", "path_outside_root"],
    ["/etc/passwd", "path_outside_root"],
    ["/project/../etc", "path_outside_root"],
    ["file-link", "symlink_escape"],
    ["dir-link/secret.txt", "symlink_escape"],
    ["dir-link", "symlink_escape"],
    ["dir-link/new-file.txt", "symlink_escape"],
    ["dangling-out", "symlink_escape"],
  ])("rejects %j with %s", async (input, code) => {
    const r = await stat(input);
    expect(r).toMatchObject({ ok: false, errorCode: code });
    expect(JSON.stringify(r)).not.toContain(outside);
  });

  it("rejects an absolute path outside the root even when it names the outside file directly", async () => {
    const r = await stat(path.join(outside, "secret.txt"));
    expect(r).toMatchObject({ ok: false, errorCode: "path_outside_root" });
  });
});
