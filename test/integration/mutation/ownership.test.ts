// When the bridge runs as root, what the file tools create belongs to the project owner (the root folder's
// owner, or URLBRIDGE_AGENT_UID/GID when that is root), and a replaced file keeps its own owner and mode.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bridgeIsRoot } from "../../../server/sandbox/identity.js";
import { agentGet, makeTempDir, startTestBridge, type TestBridge } from "../../helpers/bridge.js";
import { patchText, url } from "./fixtures.js";

const owner = (p: string) => {
  const info = fs.lstatSync(p);
  return { uid: info.uid, gid: info.gid };
};

describe.skipIf(!bridgeIsRoot())("ownership of what the file tools create (bridge running as root)", () => {
  let t: TestBridge;

  beforeAll(async () => {
    t = await startTestBridge({ URLBRIDGE_AGENT_UID: "2345", URLBRIDGE_AGENT_GID: "2346" });
  });
  afterAll(async () => t.close());

  it("gives new files and directories the project root's owner, and keeps a replaced file's owner and mode", async () => {
    const root = makeTempDir("owned-project");
    fs.chownSync(root, 1234, 1235);
    fs.writeFileSync(path.join(root, "theirs.txt"), "old\n", { mode: 0o660 });
    // Another user's file the agent may change through its group (1235), as its terminal could (agent-access.ts).
    fs.chownSync(path.join(root, "theirs.txt"), 4321, 1235);
    fs.chmodSync(path.join(root, "theirs.txt"), 0o660);
    const s = await t.session({ root, write: true });

    expect(await agentGet(url(s.m!, "w", [["path", "made/deeper/new.txt"]], "new\n"))).toMatchObject({
      ok: true,
      created: true,
    });
    expect(owner(path.join(root, "made"))).toEqual({ uid: 1234, gid: 1235 });
    expect(owner(path.join(root, "made/deeper"))).toEqual({ uid: 1234, gid: 1235 });
    expect(owner(path.join(root, "made/deeper/new.txt"))).toEqual({ uid: 1234, gid: 1235 });

    expect(await agentGet(url(s.m!, "a", [], patchText("*** Add File: patched/p.txt", "+p")))).toMatchObject({
      ok: true,
    });
    expect(owner(path.join(root, "patched/p.txt"))).toEqual({ uid: 1234, gid: 1235 });

    expect(
      await agentGet(
        url(
          s.m!,
          "e",
          [
            ["path", "theirs.txt"],
            ["old", "old"],
          ],
          "changed",
        ),
      ),
    ).toMatchObject({ ok: true });
    expect(fs.readFileSync(path.join(root, "theirs.txt"), "utf8")).toBe("changed\n");
    expect(owner(path.join(root, "theirs.txt"))).toEqual({ uid: 4321, gid: 1235 });
    expect(fs.statSync(path.join(root, "theirs.txt")).mode & 0o7777).toBe(0o660);
  });

  it("falls back to URLBRIDGE_AGENT_UID/GID when the project root belongs to root, never uid 0", async () => {
    const root = makeTempDir("root-owned-project");
    expect(fs.statSync(root).uid).toBe(0);
    // Open to everyone, so the fallback identity may write in it (write is refused where it may not: writability.ts).
    fs.chmodSync(root, 0o777);
    // Registered directly: t.session() hands root-owned temp projects to uid 1000 first, as a real folder has a user.
    const project = await t.api<{ id: string }>("POST", "/api/projects", {
      name: "root-owned",
      root,
      permissions: { write: true, terminal: false },
    });
    const session = await t.api<{ initUrl: string }>("POST", "/api/sessions", { projectId: project.body.id });
    const init = (await (await fetch(session.body.initUrl)).json()) as { bases: { m: string } };
    expect(await agentGet(url(init.bases.m, "w", [["path", "dir/new.txt"]], "x"))).toMatchObject({
      ok: true,
      created: true,
    });
    expect(owner(path.join(root, "dir"))).toEqual({ uid: 2345, gid: 2346 });
    expect(owner(path.join(root, "dir/new.txt"))).toEqual({ uid: 2345, gid: 2346 });
  });
});
