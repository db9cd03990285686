import { execFileSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  makeDirectoriesIn,
  readHeldFileSync,
  removeEmptyDirectoryIn,
  removeFileIn,
  writeFileIn,
} from "../../../server/sandbox/fd-ops.js";
import { shareRoot, walkInsideRoot, type SharedRoot, type WalkOptions } from "../../../server/sandbox/fd-walk.js";
import { makeTempDir } from "../../helpers/bridge.js";

function openFds(): number {
  return fs.readdirSync("/proc/self/fd").length;
}

describe("walkInsideRoot", () => {
  let root: string;
  let outside: string;
  let socketServer: net.Server;

  beforeAll(async () => {
    root = makeTempDir("walk-root");
    outside = makeTempDir("walk-outside");
    fs.writeFileSync(path.join(outside, "secret.txt"), "secret");
    fs.mkdirSync(path.join(root, "a", "b"), { recursive: true });
    fs.writeFileSync(path.join(root, "a", "b", "file.txt"), "inside");
    fs.writeFileSync(path.join(root, "plain"), "x");
    fs.symlinkSync("a/b", path.join(root, "rel-in"));
    fs.symlinkSync(path.join(root, "a"), path.join(root, "abs-in"));
    fs.symlinkSync("b/file.txt", path.join(root, "a", "file-link"));
    fs.symlinkSync("../..", path.join(root, "a", "b", "up-to-root"));
    fs.symlinkSync(outside, path.join(root, "out-abs"));
    fs.symlinkSync("../../../..", path.join(root, "a", "out-rel"));
    fs.symlinkSync(path.join(outside, "secret.txt"), path.join(root, "out-file"));
    fs.symlinkSync(path.join(outside, "not-yet.txt"), path.join(root, "dangling-out"));
    fs.symlinkSync("a/new.txt", path.join(root, "dangling-in"));
    fs.symlinkSync("loop-b", path.join(root, "loop-a"));
    fs.symlinkSync("loop-a", path.join(root, "loop-b"));
    execFileSync("mkfifo", [path.join(root, "fifo")]);
    socketServer = net.createServer();
    await new Promise<void>((resolve) => socketServer.listen(path.join(root, "sock"), resolve));
  });
  afterAll(() => socketServer.close());

  function outcome(input: string, options: WalkOptions = {}, from: string | SharedRoot = root): string {
    try {
      const target = walkInsideRoot(from, input, options);
      try {
        if (!target.exists) return `missing ${target.display}`;
        const info = target.stats!;
        const kind = info.isDirectory()
          ? "dir"
          : info.isFile()
            ? "file"
            : info.isFIFO()
              ? "fifo"
              : info.isSocket()
                ? "socket"
                : "other";
        return `${kind} ${target.display}`;
      } finally {
        target.close();
      }
    } catch (error) {
      return (error as { code?: string }).code ?? String(error);
    }
  }

  it.each([
    ["a plain file", "a/b/file.txt", "file /project/a/b/file.txt"],
    ["the root", ".", "dir /project"],
    ["the root by its virtual name", "/project", "dir /project"],
    ["a relative symlink to a directory inside", "rel-in/file.txt", "file /project/a/b/file.txt"],
    ["an absolute symlink to a directory inside", "abs-in/b", "dir /project/a/b"],
    ["a final symlink to a file inside", "a/file-link", "file /project/a/b/file.txt"],
    ["a symlink back to the root", "a/b/up-to-root/plain", "file /project/plain"],
    ["`..` components, resolved lexically", "a/b/../b/./file.txt", "file /project/a/b/file.txt"],
    ["`..` past the root", "a/../../x", "path_outside_root"],
    ["an absolute host path outside", "/etc/passwd", "path_outside_root"],
    ["an absolute symlink escaping", "out-abs/secret.txt", "symlink_escape"],
    ["a relative symlink escaping", "a/out-rel/etc", "symlink_escape"],
    ["a final symlink escaping", "out-file", "symlink_escape"],
    ["a dangling symlink to outside, for creation", "dangling-out", "symlink_escape"],
    ["a dangling symlink inside, for creation", "dangling-in", "missing /project/a/new.txt"],
    ["a new file under missing directories", "a/x/y/new.txt", "missing /project/a/x/y/new.txt"],
    ["a path under a regular file", "plain/child.txt", "missing /project/plain/child.txt"],
    ["a symlink loop", "loop-a", "symlink_escape"],
    ["a FIFO, without blocking", "fifo", "fifo /project/fifo"],
    ["a Unix socket", "sock", "socket /project/sock"],
    ["a name over 255 bytes", `a/${"n".repeat(300)}`, "invalid_path"],
    ["an empty path", "", "invalid_path"],
    ["a NUL byte", "a\0b", "invalid_path"],
  ])("resolves %s (%j) as %j", (_what, input, expected) => {
    expect(outcome(input)).toBe(expected);
  });

  it("refuses any symlink on the way when asked to (recorded canonical paths)", () => {
    expect(outcome("rel-in/file.txt", { symlinks: "refuse" })).toBe("path_changed");
    expect(outcome("a/b/file.txt", { symlinks: "refuse" })).toBe("file /project/a/b/file.txt");
  });

  it("answers path_not_found for a missing target that must exist", () => {
    expect(outcome("a/nope.txt", { allowMissing: false })).toBe("path_not_found");
    expect(outcome("dangling-in", { allowMissing: false })).toBe("path_not_found");
  });

  it("walks and reads paths far longer than PATH_MAX, one component at a time", async () => {
    const names = Array.from({ length: 24 }, (_, i) => `${String(i).padStart(2, "0")}-${"d".repeat(240)}`);
    const top = walkInsideRoot(root, "a");
    try {
      const deepest = await makeDirectoriesIn(top.fd!, names, undefined);
      writeFileIn(deepest, "deep.txt", Buffer.from("deep"));
      fs.closeSync(deepest);
    } finally {
      top.close();
    }
    const input = `a/${names.join("/")}/deep.txt`;
    expect(input.length).toBeGreaterThan(4096);
    const target = walkInsideRoot(root, input);
    try {
      expect(target.exists).toBe(true);
      expect(readHeldFileSync(target.fd!, target.stats!.size).toString()).toBe("deep");
    } finally {
      target.close();
    }
    // rm -r cannot remove what it cannot name: take the tree down by descriptor, deepest first.
    for (let depth = names.length; depth >= 1; depth--) {
      const parent = walkInsideRoot(root, ["a", ...names.slice(0, depth - 1)].join("/"));
      try {
        if (depth === names.length) {
          const dir = walkInsideRoot(root, ["a", ...names].join("/"));
          await removeFileIn(dir.fd!, "deep.txt").finally(() => dir.close());
        }
        expect(await removeEmptyDirectoryIn(parent.fd!, names[depth - 1]!)).toBe(true);
      } finally {
        parent.close();
      }
    }
  });

  it("answers project_root_changed when the root becomes a symlink, and project_root_missing when it is gone", () => {
    const parent = makeTempDir("walk-moved");
    const approved = path.join(parent, "approved");
    fs.mkdirSync(approved);
    fs.writeFileSync(path.join(outside, "elsewhere.txt"), "x");
    const walkApproved = (input: string) => {
      try {
        walkInsideRoot(approved, input).close();
        return "ok";
      } catch (error) {
        return (error as { code?: string }).code;
      }
    };
    expect(walkApproved(".")).toBe("ok");
    fs.rmdirSync(approved);
    fs.symlinkSync(outside, approved);
    expect(walkApproved("elsewhere.txt")).toBe("project_root_changed");
    fs.unlinkSync(approved);
    expect(walkApproved("elsewhere.txt")).toBe("project_root_missing");
    // An ancestor of the root replaced by a symlink: the root's own path now leads elsewhere.
    const real = path.join(parent, "real");
    fs.mkdirSync(path.join(real, "approved"), { recursive: true });
    fs.symlinkSync(real, path.join(parent, "via"));
    expect(
      ((): string | undefined => {
        try {
          walkInsideRoot(path.join(parent, "via", "approved"), ".").close();
          return "ok";
        } catch (error) {
          return (error as { code?: string }).code;
        }
      })(),
    ).toBe("project_root_changed");
  });

  it("closes every descriptor it opens, on success and on every kind of refusal", () => {
    const inputs = [
      "a/b/file.txt",
      "rel-in/file.txt",
      "a/x/y/new.txt",
      "out-abs/secret.txt",
      "loop-a",
      "a/../../x",
      "fifo",
      "plain/child.txt",
      "dangling-out",
    ];
    for (const input of inputs) outcome(input);
    const before = openFds();
    for (let i = 0; i < 2000; i++) outcome(inputs[i % inputs.length]!);
    for (let i = 0; i < 200; i++) outcome(inputs[i % inputs.length]!, { symlinks: "refuse", allowMissing: false });
    expect(openFds()).toBe(before);
  });

  // The walks of one /r call share one root descriptor verified in that call (docs/PERFORMANCE.md).
  it("resolves every input through a SharedRoot exactly as through the root's path", () => {
    const inputs = [
      "a/b/file.txt",
      ".",
      "/project",
      "rel-in/file.txt",
      "abs-in/b",
      "a/file-link",
      "a/b/up-to-root/plain",
      "a/../../x",
      "/etc/passwd",
      "out-abs/secret.txt",
      "a/out-rel/etc",
      "out-file",
      "dangling-out",
      "dangling-in",
      "a/x/y/new.txt",
      "plain/child.txt",
      "loop-a",
      "fifo",
      "sock",
      `a/${"n".repeat(300)}`,
      "",
      "a\0b",
    ];
    const shared = shareRoot(root);
    try {
      for (const input of inputs) {
        expect(outcome(input, {}, shared), input).toBe(outcome(input));
        expect(outcome(input, { allowMissing: false }, shared), input).toBe(outcome(input, { allowMissing: false }));
        expect(outcome(input, { symlinks: "refuse" }, shared), input).toBe(outcome(input, { symlinks: "refuse" }));
      }
    } finally {
      shared.close();
    }
  });

  it("opens a SharedRoot once, on the first walk that needs it, and only its own close() releases it", () => {
    const before = openFds();
    const shared = shareRoot(root);
    expect(outcome("a/../../x", {}, shared)).toBe("path_outside_root");
    expect(openFds()).toBe(before);
    const first = walkInsideRoot(shared, "a/b/file.txt");
    const second = walkInsideRoot(shared, "plain");
    expect(second.rootFd).toBe(first.rootFd);
    first.close();
    second.close();
    expect(openFds()).toBe(before + 1);
    expect(outcome(".", {}, shared)).toBe("dir /project");
    expect(outcome("out-abs/secret.txt", {}, shared)).toBe("symlink_escape");
    expect(openFds()).toBe(before + 1);
    shared.close();
    shared.close();
    expect(openFds()).toBe(before);
  });

  it("keeps no failed root open: each walk from a SharedRoot of a missing root fails as it would alone", () => {
    const parent = makeTempDir("walk-shared");
    const approved = path.join(parent, "approved");
    const before = openFds();
    const shared = shareRoot(approved);
    const walk = (input: string) => {
      try {
        walkInsideRoot(shared, input).close();
        return "ok";
      } catch (error) {
        return (error as { code?: string }).code;
      }
    };
    expect(walk("x")).toBe("project_root_missing");
    expect(walk("y")).toBe("project_root_missing");
    fs.mkdirSync(approved);
    fs.writeFileSync(path.join(approved, "x"), "x");
    expect(walk("x")).toBe("ok");
    shared.close();
    expect(openFds()).toBe(before);
  });
});
