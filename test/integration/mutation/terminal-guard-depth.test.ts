// The command guard knows where a command starts: "../x" from a subfolder stays in the project and runs,
// while the same text from the project root would climb out of it and is refused before anything runs.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  giveToAgent,
  startTestBridge,
  type AgentSession,
  type TestBridge,
  writeAsAgent,
  mkdirAsAgent,
} from "../../helpers/bridge.js";
import { settle } from "./terminal-helpers.js";
import { url } from "./fixtures.js";

describe("terminal guard and cwd=", () => {
  let t: TestBridge;
  let s: AgentSession;
  beforeAll(async () => {
    t = await startTestBridge();
    mkdirAsAgent(path.join(t.projectDir, "sub"));
    mkdirAsAgent(path.join(t.projectDir, "old-build"));
    writeAsAgent(path.join(t.projectDir, "old-build", "a.o"), "x");
    s = await t.session({ write: true, terminal: true });
    giveToAgent(t.projectDir);
  });
  afterAll(async () => t.close());

  it("runs a recursive delete of a sibling folder from a subfolder", async () => {
    const body = await settle(url(s.m!, "x", [["cwd", "sub"]], "rm -rf ../old-build"));
    expect(body).toMatchObject({ ok: true, exitCode: 0, cwd: "/project/sub" });
    expect(fs.existsSync(path.join(t.projectDir, "old-build"))).toBe(false);
  });

  it("refuses the same climb from the project root, where it would leave the project", async () => {
    mkdirAsAgent(path.join(t.projectDir, "keep"));
    const body = await settle(url(s.m!, "x", [], "rm -rf ../keep"));
    expect(body).toMatchObject({ ok: false, errorCode: "command_refused" });
    expect(fs.existsSync(path.join(t.projectDir, "keep"))).toBe(true);
  });
});
