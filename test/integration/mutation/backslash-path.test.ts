// A Windows-style path to create (src\new.py, src/ existing) is refused with the forward-slash path instead of
// creating one file literally named "src\new.py"; over URLs the repair, followed, creates src/new.py. An existing
// such name is kept, and one with no folder before its backslash is created as given.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentGet, startTestBridge, writeAsAgent, type AgentSession, type TestBridge } from "../../helpers/bridge.js";
import { patchText, url } from "./fixtures.js";

type Body = Record<string, unknown> & { ok: boolean; errorCode?: string; repair?: string; repairHint?: string };

describe("a backslash path to create", () => {
  let t: TestBridge;
  let s: AgentSession;
  beforeAll(async () => {
    t = await startTestBridge();
    s = await t.session({ write: true });
    writeAsAgent(path.join(t.projectDir, "src/keep.py"), "x = 1\n");
  });
  afterAll(async () => t.close());

  it("/w refuses it with the forward-slash path, and its repair creates src/new.py", async () => {
    const refused = await agentGet<Body>(`${s.m}/w?path=src%5Cnew.py&raw=print(1)~n`);
    expect(refused).toMatchObject({ ok: false, errorCode: "invalid_path", agentAction: "fetch_repair" });
    expect(refused.repairHint).toContain("src/new.py");
    expect(fs.readdirSync(t.projectDir).sort()).toEqual(["src"]);
    expect(refused.repair).toMatch(/\/w\?.*path=src\/new\.py/);
    expect(await agentGet<Body>(refused.repair!)).toMatchObject({ ok: true, created: true });
    expect(fs.readFileSync(path.join(t.projectDir, "src/new.py"), "utf8")).toBe("print(1)\n");
  });

  it("/e with an empty old (create) refuses it the same way, under the filePath alias too", async () => {
    const refused = await agentGet<Body>(`${s.m}/e?filePath=src%5Cmade.py&old=&raw=y~n`);
    expect(refused).toMatchObject({ ok: false, errorCode: "invalid_path" });
    expect(await agentGet<Body>(refused.repair!)).toMatchObject({ ok: true });
    expect(fs.readFileSync(path.join(t.projectDir, "src/made.py"), "utf8")).toBe("y\n");
  });

  it("/a refuses an Add and a Move to with a backslash, writing nothing", async () => {
    const add = await agentGet<Body>(url(s.m!, "a", [], patchText("*** Add File: src\\added.py", "+z")));
    expect(add).toMatchObject({ ok: false, errorCode: "invalid_path" });
    expect(add.repairHint).toContain("src/added.py");
    const move = await agentGet<Body>(
      url(
        s.m!,
        "a",
        [],
        patchText("*** Update File: src/keep.py", "*** Move to: src\\moved.py", "@@", "-x = 1", "+x = 2"),
      ),
    );
    expect(move).toMatchObject({ ok: false, errorCode: "invalid_path" });
    expect(fs.readdirSync(path.join(t.projectDir, "src")).sort()).toEqual(["keep.py", "made.py", "new.py"]);
    expect(fs.readdirSync(t.projectDir)).toEqual(["src"]);
  });

  it("creates a name with a backslash as given when nothing shows a separator was meant (no such folder)", async () => {
    expect(await agentGet<Body>(url(s.m!, "w", [["path", 'a"b\\c.txt']], "quoted\n"))).toMatchObject({
      ok: true,
      created: true,
    });
    expect(fs.readFileSync(path.join(t.projectDir, 'a"b\\c.txt'), "utf8")).toBe("quoted\n");
    fs.rmSync(path.join(t.projectDir, 'a"b\\c.txt'));
  });

  it("keeps writing a file that already has a backslash in its name", async () => {
    writeAsAgent(path.join(t.projectDir, "odd\\name.txt"), "old\n");
    expect((await agentGet<Body>(url(s.r, "r", [["path", "odd\\name.txt"]]))).ok).toBe(true);
    expect(await agentGet<Body>(url(s.m!, "w", [["path", "odd\\name.txt"]], "new\n"))).toMatchObject({ ok: true });
    expect(fs.readFileSync(path.join(t.projectDir, "odd\\name.txt"), "utf8")).toBe("new\n");
  });
});
