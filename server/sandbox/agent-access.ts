// Whether the agent may make a change, decided by the rules the kernel applies to its terminal commands, so that
// file tools and the terminal agree (issue 27 item 5). When the bridge is root it writes with root's DAC override,
// so the agent's identity (server/sandbox/identity.ts) is checked against the mode bits here; otherwise the bridge
// is the agent and the kernel's own access(2) answers. Checked on the descriptors the write then uses.
import fs from "node:fs";
import { fdPath } from "./fd-walk.js";
import { bridgeIsRoot, type Identity } from "./identity.js";
import { ownerForNewFiles } from "./fd-ops.js";

const S_ISVTX = 0o1000;
const WRITE = 2;
const SEARCH = 1;

/**
 * Who changes files: `identity` when the bridge is root (mode bits checked here), undefined when the bridge runs as
 * the agent itself (the kernel checks). The sandbox launcher drops supplementary groups (setgroups(0) in
 * native/sandbox/child.c), so the terminal has none, and neither has this identity.
 */
export interface AgentWriter {
  identity: Identity | undefined;
}

/** Why the agent may not make a change; `object` is the file or folder refused. */
export interface AccessDenial {
  reason: "file_read_only" | "folder_not_writable" | "sticky_folder";
  /** The agent's uid and gid (the bridge's own when it is not root). */
  agent: Identity;
  /** Owner and permission bits of the file or folder that refuses (sticky_folder: the file's owner, the folder's bits). */
  owner: Identity;
  mode: number;
}

/** The writer for a project whose root a walk holds: the agent identity the root's new files get (when root). */
export function agentWriterFor(rootFd: number, fallback: Identity | undefined): AgentWriter {
  return { identity: bridgeIsRoot() ? ownerForNewFiles(rootFd, fallback) : undefined };
}

/** The permission class the kernel picks (generic_permission): owner bits, else group bits, else other bits. */
export function grants(identity: Identity, info: Pick<fs.Stats, "uid" | "gid" | "mode">, want: number): boolean {
  const shift = identity.uid === info.uid ? 6 : identity.gid === info.gid ? 3 : 0;
  return ((info.mode >> shift) & want) === want;
}

function self(): Identity {
  return { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };
}

function kernelAllows(fd: number, mode: number): boolean {
  try {
    fs.accessSync(fdPath(fd), mode);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EACCES" || code === "EPERM" || code === "EROFS") return false;
    throw error;
  }
}

function allows(writer: AgentWriter, fd: number, info: fs.Stats, want: number): boolean {
  if (writer.identity) return grants(writer.identity, info, want);
  const mode = (want & WRITE ? fs.constants.W_OK : 0) | (want & SEARCH ? fs.constants.X_OK : 0);
  return kernelAllows(fd, mode);
}

function denial(writer: AgentWriter, reason: AccessDenial["reason"], info: fs.Stats): AccessDenial {
  return {
    reason,
    agent: writer.identity ?? self(),
    owner: { uid: info.uid, gid: info.gid },
    mode: info.mode & 0o7777,
  };
}

/** Replacing the file `fd` holds (open for writing, as `>` in the terminal): the file must grant write. */
export function refusalToReplace(writer: AgentWriter, fd: number): AccessDenial | undefined {
  const info = fs.fstatSync(fd);
  return allows(writer, fd, info, WRITE) ? undefined : denial(writer, "file_read_only", info);
}

/** Creating an entry in the folder `dirFd` holds (a new file or folder, a move's destination): write and search. */
export function refusalToCreateIn(writer: AgentWriter, dirFd: number): AccessDenial | undefined {
  const info = fs.fstatSync(dirFd);
  return allows(writer, dirFd, info, WRITE | SEARCH) ? undefined : denial(writer, "folder_not_writable", info);
}

/**
 * Removing (or moving away) the entry `fd` holds from the folder `dirFd` holds: write and search on the folder,
 * and in a sticky folder (/tmp-like) only the entry's owner or the folder's may (the kernel's sticky-bit rule).
 */
export function refusalToRemove(writer: AgentWriter, dirFd: number, fd: number): AccessDenial | undefined {
  const refused = refusalToCreateIn(writer, dirFd);
  if (refused) return refused;
  const dir = fs.fstatSync(dirFd);
  if (!(dir.mode & S_ISVTX)) return undefined;
  const uid = (writer.identity ?? self()).uid;
  const entry = fs.fstatSync(fd);
  if (uid === 0 || uid === entry.uid || uid === dir.uid) return undefined;
  return { ...denial(writer, "sticky_folder", dir), owner: { uid: entry.uid, gid: entry.gid } };
}
