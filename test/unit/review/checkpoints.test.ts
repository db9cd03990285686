// Terminal checkpoints on real temp trees: changes found between two scans, containment (a symlink out of the
// root is not followed, a file the agent could not read is left out) and the budget's notices.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { Checkpoints, type TakenCheckpoint } from "../../../server/review/checkpoint/checkpoints.js";
import { makeTempDir } from "../../helpers/bridge.js";

const AGENT = { uid: 54321, gid: 54321 };

function setup(settings: { maxFiles?: number; maxBytes?: number } = {}) {
  const root = fs.realpathSync(makeTempDir("checkpoint-project"));
  const checkpoints = new Checkpoints({
    enabled: true,
    maxFiles: settings.maxFiles ?? 1000,
    maxBytes: settings.maxBytes ?? 1024 * 1024,
    dir: path.join(makeTempDir("checkpoint-state"), "checkpoints"),
  });
  return { root, checkpoints, project: { id: "p1", root } };
}

function taken(value: TakenCheckpoint | { notice: string }): TakenCheckpoint {
  if ("notice" in value) throw new Error(value.notice);
  return value;
}

describe("terminal checkpoints", () => {
  it("finds a modification, a creation, a deletion and a rename with both sides' bytes", async () => {
    const { root, checkpoints, project } = setup();
    fs.writeFileSync(path.join(root, "a.txt"), "a\n");
    fs.writeFileSync(path.join(root, "b.txt"), "b\n");
    fs.writeFileSync(path.join(root, "c.txt"), "c\n");
    const first = taken(await checkpoints.before(project, undefined));
    fs.writeFileSync(path.join(root, "a.txt"), "A\n");
    fs.rmSync(path.join(root, "b.txt"));
    fs.renameSync(path.join(root, "c.txt"), path.join(root, "d.txt"));
    fs.writeFileSync(path.join(root, "e.txt"), "e\n");
    const outcome = await checkpoints.after(first);
    const rows = (outcome.changes ?? []).map((c) => ({
      path: path.relative(root, c.path),
      moved: c.moved === undefined ? undefined : path.relative(root, c.moved),
      before: c.before?.content.toString(),
      after: c.after?.content.toString(),
    }));
    expect(rows.sort((x, y) => x.path.localeCompare(y.path))).toEqual([
      { path: "a.txt", moved: undefined, before: "a\n", after: "A\n" },
      { path: "b.txt", moved: undefined, before: "b\n", after: undefined },
      { path: "c.txt", moved: "d.txt", before: "c\n", after: undefined },
      { path: "d.txt", moved: "c.txt", before: undefined, after: "c\n" },
      { path: "e.txt", moved: undefined, before: undefined, after: "e\n" },
    ]);
    // The next checkpoint starts from this one's scan: a command that changes nothing records nothing.
    const second = taken(await checkpoints.before(project, undefined));
    expect((await checkpoints.after(second)).changes).toEqual([]);
  });

  it("does not follow a symlink out of the root, nor read what the agent could not", async () => {
    const { root, checkpoints, project } = setup();
    const outside = makeTempDir("checkpoint-outside");
    fs.writeFileSync(path.join(outside, "theirs.txt"), "outside\n");
    fs.symlinkSync(outside, path.join(root, "link"));
    fs.writeFileSync(path.join(root, "private.txt"), "secret\n", { mode: 0o600 });
    fs.writeFileSync(path.join(root, "open.txt"), "open\n", { mode: 0o644 });
    const first = taken(await checkpoints.before(project, AGENT));
    expect([...first.files.keys()].map((p) => path.relative(root, p))).toEqual(["open.txt"]);
    fs.writeFileSync(path.join(outside, "theirs.txt"), "changed\n");
    fs.writeFileSync(path.join(root, "private.txt"), "changed\n");
    expect((await checkpoints.after(first)).changes).toEqual([]);
  });

  it.each([
    [{ maxFiles: 2 }, "terminal changes not recorded: tree over 2 files (URLBRIDGE_CHECKPOINT_MAX_FILES)"],
    [{ maxBytes: 1024 * 1024 }, "terminal changes not recorded: tree over 1 MiB (URLBRIDGE_CHECKPOINT_MAX_MB)"],
  ])("past its budget (%o) answers a notice instead of a partial scan", async (budget, notice) => {
    const { root, checkpoints, project } = setup(budget);
    for (let i = 0; i < 3; i++) fs.writeFileSync(path.join(root, `f${i}.bin`), Buffer.alloc(400 * 1024));
    expect(await checkpoints.before(project, undefined)).toEqual({ notice });
  });

  it("gives a notice when the tree grew past the budget during the command", async () => {
    const { root, checkpoints, project } = setup({ maxFiles: 2 });
    fs.writeFileSync(path.join(root, "one.txt"), "1\n");
    const first = taken(await checkpoints.before(project, undefined));
    for (let i = 0; i < 3; i++) fs.writeFileSync(path.join(root, `n${i}.txt`), `${i}\n`);
    expect(await checkpoints.after(first)).toEqual({
      notice: "terminal changes not recorded: tree over 2 files after the command (URLBRIDGE_CHECKPOINT_MAX_FILES)",
    });
  });
});
