import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { resolveInsideRoot } from "../../../server/sandbox/paths.js";
import { makeTempDir } from "../../helpers/bridge.js";

describe("resolveInsideRoot for new targets", () => {
  let root: string;
  let outside: string;
  beforeAll(() => {
    root = makeTempDir("root");
    outside = makeTempDir("outside");
    fs.mkdirSync(path.join(root, "a"));
    fs.symlinkSync(outside, path.join(root, "out"));
    fs.symlinkSync(path.join(root, "a"), path.join(root, "in"));
  });

  it("contains a missing file by its nearest existing ancestor", async () => {
    const r = await resolveInsideRoot(root, "a/b/c.txt");
    expect(r).toMatchObject({ exists: false, display: "/project/a/b/c.txt", absolute: path.join(root, "a", "b", "c.txt") });
  });

  it("follows an inside symlink ancestor for a new file", async () => {
    const r = await resolveInsideRoot(root, "in/new.txt");
    expect(r.absolute).toBe(path.join(root, "a", "new.txt"));
  });

  it("rejects a new file under a symlink that leaves the root", async () => {
    await expect(resolveInsideRoot(root, "out/deeper/new.txt")).rejects.toMatchObject({ code: "symlink_escape" });
  });

  it("reports a missing target as path_not_found when it must exist", async () => {
    await expect(resolveInsideRoot(root, "nope.txt", { allowMissing: false })).rejects.toMatchObject({ code: "path_not_found" });
  });

  it.each(["", "a\0b"])("rejects the invalid path %j", async (input) => {
    await expect(resolveInsideRoot(root, input)).rejects.toMatchObject({ code: "invalid_path" });
  });

  it("says plainly when the project root itself has gone", async () => {
    await expect(resolveInsideRoot(path.join(root, "no-such-root"), "a.txt")).rejects.toMatchObject({ code: "project_root_missing" });
  });

  it("treats a path under a regular file as missing, not as an error", async () => {
    fs.writeFileSync(path.join(root, "plain"), "x");
    const r = await resolveInsideRoot(root, "plain/child.txt");
    expect(r).toMatchObject({ exists: false, display: "/project/plain/child.txt" });
  });

  it("refuses to follow a project root that has since become a symlink to another folder", async () => {
    const parent = makeTempDir("moved");
    const approved = path.join(parent, "approved");
    const elsewhere = path.join(parent, "elsewhere");
    fs.mkdirSync(approved);
    fs.mkdirSync(elsewhere);
    fs.writeFileSync(path.join(elsewhere, "secret.txt"), "x");
    expect((await resolveInsideRoot(approved, ".")).display).toBe("/project");
    fs.rmSync(approved, { recursive: true });
    fs.symlinkSync(elsewhere, approved);
    await expect(resolveInsideRoot(approved, "secret.txt")).rejects.toMatchObject({ code: "project_root_changed" });
  });
});
