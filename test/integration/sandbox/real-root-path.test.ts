// One path vocabulary (issue 32): the terminal's pwd is the root's real path (e.g. /projects/demo in the appliance),
// test output carries such paths, and an agent copies them into file tools. Those answer as for /project: the same
// file, shown as /project/..., while a real path outside the root is refused as any escape is.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeUrlText } from "../../../server/url-grammar/encode.js";
import { agentGet, giveToAgent, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";

type Body = Record<string, unknown> & { ok: boolean };

describe("file tools given the root's real path, as the terminal prints it", () => {
  let t: TestBridge;
  let s: AgentSession;
  let realRoot: string;

  beforeAll(async () => {
    t = await startTestBridge();
    fs.mkdirSync(path.join(t.projectDir, "src"));
    fs.writeFileSync(path.join(t.projectDir, "src", "a.txt"), "alpha\n");
    giveToAgent(t.projectDir);
    s = await t.session({ write: true, terminal: true });
    const pwd = await agentGet<Body & { stdout: string }>(`${s.m}/x?wait=10000&raw=${encodeUrlText("pwd")}`);
    realRoot = pwd.stdout.trim();
  });
  afterAll(async () => t.close());

  it("the terminal's pwd is the root's real path, not /project", () => {
    expect(realRoot).toBe(fs.realpathSync(t.projectDir));
    expect(realRoot).not.toBe("/project");
  });

  it("read, stat and grep answer for <real root>/src/a.txt as for /project/src/a.txt, naming it /project/...", async () => {
    const read = (p: string) =>
      agentGet<Body & { files: Array<{ path: string; content: string }> }>(`${s.r}/r?path=${p}/src/a.txt`);
    const [real, virtual] = await Promise.all([read(realRoot), read("/project")]);
    expect(real.files.map((f) => [f.path, f.content])).toEqual([["/project/src/a.txt", "alpha\n"]]);
    expect(real.files).toEqual(virtual.files);

    const stat = (p: string) => agentGet<Body & { path: string }>(`${s.r}/t?path=${p}/src/a.txt`);
    const [realStat, virtualStat] = await Promise.all([stat(realRoot), stat("/project")]);
    expect(realStat).toMatchObject({ ok: true, path: "/project/src/a.txt" });
    expect(realStat.path).toBe(virtualStat.path);

    const grep = (p: string) => agentGet<Body & { files: Array<{ path: string }> }>(`${s.r}/g?path=${p}/src&raw=alpha`);
    const [realGrep, virtualGrep] = await Promise.all([grep(realRoot), grep("/project")]);
    expect(realGrep.files.map((f) => f.path)).toEqual(["/project/src/a.txt"]);
    expect(realGrep.files).toEqual(virtualGrep.files);
  });

  it("writes through the real path land in the project, and the answer names the file as /project/...", async () => {
    const body = await agentGet<Body & { path: string }>(
      `${s.m}/w?path=${realRoot}/src/b.txt&raw=${encodeUrlText("beta\n")}`,
    );
    expect(body).toMatchObject({ ok: true, path: "/project/src/b.txt" });
    expect(fs.readFileSync(path.join(t.projectDir, "src", "b.txt"), "utf8")).toBe("beta\n");
  });

  it("a real path outside the root is refused like any escape", async () => {
    const outside = await agentGet<Body & { errorCode: string }>(
      `${s.r}/r?path=${path.dirname(realRoot)}/elsewhere.txt`,
    );
    expect(outside.ok).toBe(false);
    expect(outside.errorCode).toMatch(/outside|escape|not_found|path/);
  });
});
