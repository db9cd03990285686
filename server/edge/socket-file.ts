// The file-system side of the MCP socket (server/mcp/socket-listener.ts): what is at its path, removing a
// leftover, restricting the bound socket to its owner, and removing it again only if it is still ours. Kept out
// of server/mcp/, which does no file I/O (test/unit/mcp/no-file-io.test.ts).
import fs from "node:fs";

/** What occupies `file`: nothing, a socket (perhaps a killed bridge's), or something else. */
export function socketFileKind(file: string): "absent" | "socket" | "other" {
  try {
    return fs.lstatSync(file).isSocket() ? "socket" : "other";
  } catch {
    return "absent";
  }
}

export function removeSocketFile(file: string): void {
  fs.unlinkSync(file);
}

/** Restricts a freshly bound socket to its owner (it is bound with the umask's mode), and returns its inode. */
export function ownSocketFile(file: string): number {
  fs.chmodSync(file, 0o600);
  return fs.statSync(file).ino;
}

/** Removes `file` if it is still the socket with inode `ino` (a later bridge may have bound the path meanwhile). */
export function removeSocketFileIfOurs(file: string, ino: number): void {
  try {
    if (fs.lstatSync(file).ino === ino) fs.unlinkSync(file);
  } catch {
    // already gone
  }
}
