// Crash-safe file operations on held paths (server/sandbox/fd-walk.ts): every write goes to a temp file in the
// checked directory, is fsynced, renamed over the target in that same directory and the directory fsynced, so a
// reader (or a crash) sees the old bytes or the new, never half, and nothing lands outside the root. The fsyncs
// run in the thread pool (durable-write.ts); a journaled write changes the tree only once its intent is durable.
import path from "node:path";
import type { HeldPath } from "../../sandbox/fd-walk.js";
import { closeQuietly } from "../../sandbox/fd-walk.js";
import { makeDirectoriesIn, ownerForNewFiles, removeFileIn, writeFileIn } from "../../sandbox/fd-ops.js";
import type { Identity } from "../../sandbox/identity.js";
import { bridgeIsRoot } from "../../sandbox/identity.js";
import { writeFileDurably } from "./durable-write.js";

export interface HeldWriteOptions {
  /** Permission bits to give the file (e.g. the replaced file's). Default: 0o666 minus the umask. */
  mode?: number;
  /** URLBRIDGE_AGENT_UID/GID, for new files when the bridge is root and the root is root's. */
  agentFallback?: Identity;
  /**
   * The intent's ctx.intent.durable(): awaited before the tree changes at all (the rename over an existing file,
   * overlapped with the temp file's fsync; the first mkdir of a new file's folders).
   */
  journaled?: () => Promise<void>;
  /**
   * Both fsyncs on the event loop, at once (fd-ops writeFileIn): for a write that other mutations of its project
   * are queued behind, where two thread-pool trips would each hold them up for an event-loop turn.
   */
  inline?: boolean;
}

/**
 * Writes the file a held path names. An existing file is replaced keeping its owner (when root); a new one is
 * created with any missing directories, each made and entered by descriptor, all given the project owner.
 */
export async function writeHeldFile(target: HeldPath, bytes: Buffer, options: HeldWriteOptions = {}): Promise<void> {
  const mode = options.mode === undefined ? {} : { mode: options.mode };
  if (target.exists) {
    const owner = bridgeIsRoot() && target.stats ? { uid: target.stats.uid, gid: target.stats.gid } : undefined;
    if (options.inline) {
      await options.journaled?.();
      writeFileIn(target.dirFd, target.name, bytes, { ...mode, ...(owner ? { owner } : {}) });
      return;
    }
    const beforeRename = options.journaled?.();
    await writeFileDurably(target.dirFd, target.name, bytes, { ...mode, ...(owner ? { owner } : {}), ...(beforeRename ? { beforeRename } : {}) });
    return;
  }
  const owner = ownerForNewFiles(target.rootFd, options.agentFallback);
  if (options.journaled && target.pending.length > 1) await options.journaled();
  const dir = await makeDirectoriesIn(target.dirFd, target.pending.slice(0, -1), owner);
  try {
    if (options.inline) {
      if (target.pending.length <= 1) await options.journaled?.();
      writeFileIn(dir, target.name, bytes, { ...mode, ...(owner ? { owner } : {}) });
      return;
    }
    const beforeRename = target.pending.length > 1 ? undefined : options.journaled?.();
    await writeFileDurably(dir, target.name, bytes, { ...mode, ...(owner ? { owner } : {}), ...(beforeRename ? { beforeRename } : {}) });
  } finally {
    if (dir !== target.dirFd) closeQuietly(dir);
  }
}

/** Removes the file a held path names, if it exists; true when something was removed. */
export async function removeHeldFile(target: HeldPath): Promise<boolean> {
  if (!target.exists || target.name === "") return false;
  return removeFileIn(target.dirFd, target.name);
}

/** Host paths of the directories writing a new held target will create, outermost first. */
export function directoriesToCreate(target: HeldPath): string[] {
  if (target.exists) return [];
  const existing = target.parts.length - target.pending.length;
  const out: string[] = [];
  for (let n = existing + 1; n < target.parts.length; n++) out.push(path.join(target.root, ...target.parts.slice(0, n)));
  return out;
}
