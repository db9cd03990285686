import { execFileSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openEntry, readOpenFile } from "../../../server/kernel/read/file-read.js";
import { closeQuietly, O_PATH } from "../../../server/sandbox/fd-walk.js";
import { makeTempDir } from "../../helpers/bridge.js";

describe("openEntry", () => {
  let dir: string;
  let dirFd: number;
  let socketServer: net.Server;
  beforeAll(async () => {
    dir = makeTempDir("open-resolved");
    fs.writeFileSync(path.join(dir, "file.txt"), "hello\n");
    fs.mkdirSync(path.join(dir, "sub"));
    fs.symlinkSync(path.join(dir, "file.txt"), path.join(dir, "link.txt"));
    execFileSync("mkfifo", [path.join(dir, "pipe")]);
    socketServer = net.createServer();
    await new Promise<void>((resolve) => socketServer.listen(path.join(dir, "sock"), resolve));
    dirFd = fs.openSync(dir, O_PATH | fs.constants.O_DIRECTORY);
  });
  afterAll(() => {
    closeQuietly(dirFd);
    socketServer.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  function kindOf(name: string): string {
    const opened = openEntry(dirFd, name);
    if (opened.kind !== "open") return opened.kind;
    fs.closeSync(opened.fd);
    return opened.info.isFile() ? "file" : opened.info.isDirectory() ? "dir" : opened.info.isFIFO() ? "fifo" : "other";
  }

  it.each([
    ["a regular file", "file.txt", "file"],
    ["a directory", "sub", "dir"],
    // The directory is held by descriptor; a symlink entry is never followed.
    ["a final component that is now a symlink", "link.txt", "changed"],
    ["a path that is gone", "gone.txt", "changed"],
    ["a path under a regular file", "file.txt/x", "changed"],
    // O_NONBLOCK: without it, opening a FIFO with no writer would block the event loop for good.
    ["a FIFO, without waiting for a writer", "pipe", "fifo"],
    ["a Unix socket", "sock", "unopenable"],
  ])("opens %s as %s", (_name, name, kind) => {
    expect(kindOf(name)).toBe(kind);
  });

  it("reads the whole file, and only what is there when it shrank after fstat", () => {
    const opened = openEntry(dirFd, "file.txt");
    if (opened.kind !== "open") throw new Error(`unexpected ${opened.kind}`);
    try {
      expect(readOpenFile(opened.fd, opened.info.size).toString()).toBe("hello\n");
      fs.truncateSync(path.join(dir, "file.txt"), 2);
      expect(readOpenFile(opened.fd, opened.info.size).toString()).toBe("he");
    } finally {
      fs.closeSync(opened.fd);
    }
  });
});
