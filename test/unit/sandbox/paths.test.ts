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

  it("contains a missing file by its nearest existing ancestor", () => {
    const r = resolveInsideRoot(root, "a/b/c.txt");
    expect(r).toMatchObject({
      exists: false,
      display: "/project/a/b/c.txt",
      absolute: path.join(root, "a", "b", "c.txt"),
    });
  });

  it("follows an inside symlink ancestor for a new file", () => {
    const r = resolveInsideRoot(root, "in/new.txt");
    expect(r.absolute).toBe(path.join(root, "a", "new.txt"));
  });

  it("rejects a new file under a symlink that leaves the root", () => {
    expect(() => resolveInsideRoot(root, "out/deeper/new.txt")).toThrow(
      expect.objectContaining({ code: "symlink_escape" }),
    );
  });

  it("reports a missing target as path_not_found when it must exist", () => {
    expect(() => resolveInsideRoot(root, "nope.txt", { allowMissing: false })).toThrow(
      expect.objectContaining({ code: "path_not_found" }),
    );
  });

  it.each(["", "a\0b"])("rejects the invalid path %j", (input) => {
    expect(() => resolveInsideRoot(root, input)).toThrow(expect.objectContaining({ code: "invalid_path" }));
  });

  it("says plainly when the project root itself has gone", () => {
    expect(() => resolveInsideRoot(path.join(root, "no-such-root"), "a.txt")).toThrow(
      expect.objectContaining({ code: "project_root_missing" }),
    );
  });

  it("treats a path under a regular file as missing, not as an error", () => {
    fs.writeFileSync(path.join(root, "plain"), "x");
    const r = resolveInsideRoot(root, "plain/child.txt");
    expect(r).toMatchObject({ exists: false, display: "/project/plain/child.txt" });
  });

  it("refuses to follow a project root that has since become a symlink to another folder", () => {
    const parent = makeTempDir("moved");
    const approved = path.join(parent, "approved");
    const elsewhere = path.join(parent, "elsewhere");
    fs.mkdirSync(approved);
    fs.mkdirSync(elsewhere);
    fs.writeFileSync(path.join(elsewhere, "secret.txt"), "x");
    expect(resolveInsideRoot(approved, ".").display).toBe("/project");
    fs.rmSync(approved, { recursive: true });
    fs.symlinkSync(elsewhere, approved);
    expect(() => resolveInsideRoot(approved, "secret.txt")).toThrow(
      expect.objectContaining({ code: "project_root_changed" }),
    );
  });
});
