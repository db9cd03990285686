// Where a worktree session's folder goes and what its branch is called (server/control/worktrees/worktree-layout.ts),
// and the bounded disk-use walk (disk-use.ts) on a real temp folder.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { makeTempDir } from "../../../helpers/bridge.js";
import { defaultBranch, slugOf, worktreePath } from "../../../../server/control/worktrees/worktree-layout.js";
import { measureDiskUse } from "../../../../server/control/worktrees/disk-use.js";

describe("worktree names", () => {
  it.each([
    ["Fix Bug", "fix-bug"],
    ["refactor/auth", "refactor-auth"],
    ["Ünïcödé café", "unicode-cafe"],
    ["..hidden..", "hidden"],
    ["a..b", "a.b"],
    ["thing.lock", "thing-lock"],
    ["!!!", "session"],
    ["x".repeat(100), "x".repeat(64)],
  ])("slugOf(%j) is %j", (name, slug) => {
    expect(slugOf(name)).toBe(slug);
  });

  it("names the branch urlbridge/<slug>", () => {
    expect(defaultBranch("Agent 7")).toBe("urlbridge/agent-7");
  });

  it.each([
    [{ root: "/projects/demo", projectId: "p_1", branch: "urlbridge/fix-bug" }, "/projects/demo.worktrees/fix-bug"],
    [{ root: "/projects/demo", projectId: "p_1", branch: "work/x", configuredDir: "/srv/wt" }, "/srv/wt/p_1/x"],
  ])("puts %j at %s", (input, expected) => {
    expect(worktreePath(input)).toBe(expected);
  });
});

describe("measureDiskUse", () => {
  it("counts the files' blocks once per inode, without following links, and says when it stopped early", async () => {
    const dir = makeTempDir("disk-use");
    fs.mkdirSync(path.join(dir, "sub"));
    fs.writeFileSync(path.join(dir, "sub", "a.bin"), Buffer.alloc(64 * 1024, 1));
    fs.linkSync(path.join(dir, "sub", "a.bin"), path.join(dir, "hard.bin"));
    fs.symlinkSync("/usr", path.join(dir, "usr-link"));
    const whole = await measureDiskUse(dir);
    expect(whole.complete).toBe(true);
    expect(whole.files).toBe(2);
    expect(whole.bytes).toBeGreaterThanOrEqual(64 * 1024);
    expect(whole.bytes).toBeLessThan(2 * 64 * 1024);
    const cut = await measureDiskUse(dir, 1);
    expect(cut.complete).toBe(false);
  });
});
