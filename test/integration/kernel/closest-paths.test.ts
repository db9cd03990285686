// path_not_found that helps: the answer names the existing paths closest to the missing one, found through
// the containment walk, and reading the first of them works. Nothing outside the project is ever offered.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentGet, makeTempDir, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";
import { writeTree } from "./fixtures.js";

type Body = { ok: boolean; errorCode?: string; closest?: string[]; find?: string; [key: string]: unknown };

describe("closest existing paths on path_not_found", () => {
  let t: TestBridge;
  let s: AgentSession;
  beforeAll(async () => {
    t = await startTestBridge();
    writeTree(t.projectDir, {
      "src/scanner.py": "def scan():\n    pass\n",
      "src/parser.py": "",
      "README.md": "hi\n",
      "docs/guide.md": "",
    });
    const outside = makeTempDir("closest-outside");
    fs.writeFileSync(path.join(outside, "scanner.py"), "outside-secret");
    fs.symlinkSync(outside, path.join(t.projectDir, "src", "linked"));
    s = await t.session();
  });
  afterAll(async () => t.close());

  it.each([
    ["a misspelt file (/r)", "r", "src/scaner.py", "/project/src/scanner.py"],
    ["another case (/r)", "r", "readme.md", "/project/README.md"],
    ["a misspelt folder (/r)", "r", "scr/scanner.py", "/project/src/scanner.py"],
    ["another extension (/o)", "o", "src/scanner.ts", "/project/src/scanner.py"],
    ["a misspelt file (/g path=)", "g", "docs/guid.md&pattern=x", "/project/docs/guide.md"],
  ])("%s answers closest, and the first one reads", async (_what, route, requested, expected) => {
    const body = await agentGet<Body>(`${s.r}/${route}?path=${requested}`);
    expect(body).toMatchObject({ ok: false, errorCode: "path_not_found" });
    expect(body.closest?.[0]).toBe(expected);
    expect(await agentGet<Body>(`${s.r}/r?path=${body.closest![0]}`)).toMatchObject({ ok: true });
  });

  it("offers nothing when nothing is close, and never a path through a link that leads out", async () => {
    const far = await agentGet<Body>(`${s.r}/r?path=src/zzzzzzzz.py`);
    expect(far).toMatchObject({ ok: false, errorCode: "path_not_found" });
    expect(far.closest).toBeUndefined();
    const linked = await agentGet<Body>(`${s.r}/r?path=src/linkd/scanner.py`);
    expect(JSON.stringify(linked)).not.toContain("outside-secret");
    expect(linked.closest ?? []).not.toContain("/project/src/linked/scanner.py");
  });
});
