// The three phases of a patch commit (commit.ts runs them once every preimage is durable), so that a patch of N
// files in K directories costs N + K fsyncs in a few parallel rounds instead of 2N one after another:
// 1. stage: each new file's bytes go to a temp file (fd-ops tempName, which recovery's removeStaleTempFilesIn
//    recognises) in its checked directory, and the temps are fsynced in parallel in the thread pool, STAGE_CHUNK at a time;
// 2. switch: in plan order, each path is walked again (any symlink on the way is path_changed, a file the plan read
//    that is gone is path_not_found), its directory must be the very one staged into, and the temp is renamed over
//    the target through that held directory's descriptor; deletions and moved sources are unlinked;
// 3. sync: every directory that changed is fsynced once, in parallel, before the answer.
// The tree changes only in 2. A failure anywhere: discard() removes every temp not yet renamed, and the caller
// rolls the preimages back; a crash: start-up rollback removes the temps beside each preimage's path.
import fs from "node:fs";
import { ErrorCode, ToolError } from "../../../errors.js";
import type { ToolContext } from "../../../kernel/tool/definition.js";
import {
  CREATE_FLAGS,
  discardTempFile,
  fillTempFile,
  makeDirectoriesIn,
  ownerForNewFiles,
  syncDirectory,
  tempName,
} from "../../../sandbox/fd-ops.js";
import { closeQuietly, fdPath, O_PATH, walkInsideRoot, type HeldPath } from "../../../sandbox/fd-walk.js";
import { bridgeIsRoot, type Identity } from "../../../sandbox/identity.js";
import { requireAgentMay } from "../agent-permission.js";
import { freeReplacedInodeInPool } from "../atomic-write.js";
import { fsyncInPool, syncDirectoryInPool } from "../durable-write.js";
import type { PlannedChange, PlannedPath } from "./plan.js";

/**
 * Temp files open (written, awaiting their fsync) at once while staging, and directories fsynced at once: bounds the
 * descriptors a large patch holds beside one O_PATH descriptor per distinct directory it writes in. 64 rather than
 * 32: a 50-file patch's temps then share one round (measured: one round of 50 fsyncs ~4.7 ms, rounds of 32 + 18
 * ~8 ms), and 64 descriptors are far below any open-file limit Node runs with.
 */
export const STAGE_CHUNK = 64;

/** Where the commit is: the change being worked on (its index in plan order), for the failure's message. */
export interface CommitProgress {
  phase: "stage" | "switch" | "sync";
  at: number;
}

interface StagedTemp {
  dirKey: string;
  temp: string;
  renamed: boolean;
}

/** Settles every promise, then throws the first rejection (so no descriptor is closed under a running fsync). */
async function allOrFirstError(work: Array<Promise<void>>): Promise<void> {
  const settled = await Promise.allSettled(work);
  const failed = settled.find((s) => s.status === "rejected");
  if (failed) throw failed.reason;
}

function dirKeyOf(fd: number): string {
  const info = fs.fstatSync(fd);
  return `${info.dev}:${info.ino}`;
}

function walk(ctx: ToolContext, path: PlannedPath, need: "existing" | "create"): HeldPath {
  return walkInsideRoot(ctx.project.root, path.display, {
    symlinks: "refuse",
    ...(need === "existing" ? { allowMissing: false } : {}),
  });
}

export class PatchCommit {
  /** One O_PATH descriptor per distinct directory staged into or changed, by dev:ino. */
  private readonly dirs = new Map<string, number>();
  /** Directories changed by the switch (to fsync), each with the first change that changed it. */
  private readonly changed = new Map<string, number>();
  private readonly staged = new Map<number, StagedTemp>();

  constructor(
    private readonly ctx: ToolContext,
    private readonly changes: PlannedChange[],
    private readonly progress: CommitProgress,
    /** fsyncs on the event loop (a saturated loop, inline-sync.ts) instead of in the thread pool. */
    private readonly inline: boolean,
  ) {}

  /** Phase 1: every added, updated and moved-destination file written to a durable temp file beside its target. */
  async stage(): Promise<void> {
    this.progress.phase = "stage";
    let open: number[] = [];
    const flush = async () => {
      const fds = open;
      open = [];
      try {
        if (this.inline) fds.forEach((fd) => fs.fsyncSync(fd));
        else await allOrFirstError(fds.map(fsyncInPool));
      } finally {
        fds.forEach(closeQuietly);
      }
    };
    try {
      for (const [index, change] of this.changes.entries()) {
        this.progress.at = index;
        if (change.op === "deleted") continue;
        // A move whose source is gone writes nothing at its destination.
        if (change.op === "moved") walk(this.ctx, change.from!, "existing").close();
        const fd = await this.stageOne(index, change);
        open.push(fd);
        if (open.length >= STAGE_CHUNK) await flush();
      }
      await flush();
    } finally {
      open.forEach(closeQuietly);
    }
  }

  private async stageOne(index: number, change: PlannedChange): Promise<number> {
    const target = walk(this.ctx, change.target, change.op === "updated" ? "existing" : "create");
    let dir = target.dirFd;
    try {
      // Again on the very descriptors written through: planning checked the same, a chmod since is caught here.
      requireAgentMay(this.ctx, target, "write");
      let owner: Identity | undefined;
      if (target.exists) {
        owner = bridgeIsRoot() && target.stats ? { uid: target.stats.uid, gid: target.stats.gid } : undefined;
      } else {
        owner = ownerForNewFiles(target.rootFd, this.ctx.project.agentFallback);
        dir = await makeDirectoriesIn(target.dirFd, target.pending.slice(0, -1), owner);
      }
      const dirKey = this.hold(dir);
      const temp: StagedTemp = { dirKey, temp: tempName(target.name), renamed: false };
      const fd = fs.openSync(fdPath(this.dirs.get(dirKey)!, temp.temp), CREATE_FLAGS, 0o666);
      this.staged.set(index, temp);
      try {
        fillTempFile(fd, change.bytes!, {
          ...(change.mode === undefined ? {} : { mode: change.mode }),
          ...(owner ? { owner } : {}),
        });
      } catch (error) {
        closeQuietly(fd);
        throw error;
      }
      return fd;
    } finally {
      if (dir !== target.dirFd) closeQuietly(dir);
      target.close();
    }
  }

  /** The key of a directory, holding a descriptor of its own to it from now on. */
  private hold(dirFd: number): string {
    const key = dirKeyOf(dirFd);
    if (!this.dirs.has(key)) this.dirs.set(key, fs.openSync(fdPath(dirFd), O_PATH));
    return key;
  }

  private markChanged(dirFd: number, index: number): void {
    const key = this.hold(dirFd);
    if (!this.changed.has(key)) this.changed.set(key, index);
  }

  /**
   * Phase 2 for one change (commit.ts calls it in plan order): the tree changes here, one rename or unlink at a time.
   * Returns once the change is in place, its directory's fsync left to sync().
   */
  switchOne(index: number): void {
    this.progress.phase = "switch";
    this.progress.at = index;
    const change = this.changes[index]!;
    if (change.op === "deleted") {
      const target = walk(this.ctx, change.target, "existing");
      try {
        this.unlink(target, index);
      } finally {
        target.close();
      }
      return;
    }
    const source = change.op === "moved" ? walk(this.ctx, change.from!, "existing") : undefined;
    try {
      const target = walk(this.ctx, change.target, change.op === "updated" ? "existing" : "create");
      let release = () => {};
      try {
        const staged = this.staged.get(index)!;
        // The folder staged into must still be the one the path leads to: one removed, recreated or moved away since
        // (a symlink now on the way is refused by the walk itself) is not where this file belongs any more.
        if (target.pending.length > 1 || dirKeyOf(target.dirFd) !== staged.dirKey) {
          throw new ToolError(
            ErrorCode.pathChanged,
            `"${change.target.display}" changed while this call was using it (a folder on the way was replaced). Nothing outside the project was touched; fetch the same URL again.`,
            {
              detail: { path: change.target.display },
              retryable: true,
              agentAction: "wait_and_retry",
            },
          );
        }
        // A second reference to the inode the rename replaces, dropped in the thread pool: its last close frees it,
        // which would otherwise happen in the walk's close, on the event loop.
        if (target.exists) release = freeReplacedInodeInPool(target);
        const dirFd = this.dirs.get(staged.dirKey)!;
        fs.renameSync(fdPath(dirFd, staged.temp), fdPath(dirFd, target.name));
        staged.renamed = true;
        this.markChanged(dirFd, index);
      } finally {
        target.close();
        release();
      }
      if (source) this.unlink(source, index);
    } finally {
      source?.close();
    }
  }

  private unlink(target: HeldPath, index: number): void {
    requireAgentMay(this.ctx, target, "remove");
    try {
      fs.unlinkSync(fdPath(target.dirFd, target.name));
    } catch (error) {
      // Gone since the walk a moment ago: nothing to remove (removeHeldFile's answer too).
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
      throw error;
    }
    this.markChanged(target.dirFd, index);
  }

  /** Phase 3: each directory that changed fsynced once, STAGE_CHUNK at a time in parallel. */
  async sync(): Promise<void> {
    this.progress.phase = "sync";
    const entries = [...this.changed];
    for (let i = 0; i < entries.length; i += STAGE_CHUNK) {
      const chunk = entries.slice(i, i + STAGE_CHUNK);
      if (this.inline) {
        for (const [key, index] of chunk) {
          this.progress.at = index;
          syncDirectory(this.dirs.get(key)!);
        }
        continue;
      }
      const settled = await Promise.allSettled(chunk.map(([key]) => syncDirectoryInPool(this.dirs.get(key)!)));
      const failed = settled.findIndex((s) => s.status === "rejected");
      if (failed >= 0) {
        this.progress.at = chunk[failed]![1];
        throw (settled[failed] as PromiseRejectedResult).reason;
      }
    }
  }

  /** Removes every temp file this commit created and did not rename (after a failure); never throws. */
  discard(): void {
    for (const staged of this.staged.values()) {
      const dirFd = this.dirs.get(staged.dirKey);
      if (!staged.renamed && dirFd !== undefined) discardTempFile(dirFd, staged.temp);
    }
  }

  close(): void {
    for (const fd of this.dirs.values()) closeQuietly(fd);
    this.dirs.clear();
  }
}
