// Checkpoints around terminal commands (issue 30 item 1): a scan of the project before the command, whose files'
// bytes sit in a content-addressed cache (blob-cache.ts) kept from scan to scan, and a scan after it; files whose
// (dev, ino, size, mtime, ctime, mode) moved are read and compared by hash, giving the command's creations,
// modifications, deletions and moves with exact bytes on both sides. Past a budget of files or bytes nothing is
// recorded and the caller is told why. Mechanism and its cost: docs/ARCHITECTURE.md, docs/PERFORMANCE.md.
import fs from "node:fs";
import path from "node:path";
import { contentHash, type NewFileChange } from "../../store/changes.js";
import type { Identity } from "../../sandbox/identity.js";
import { BlobCache } from "./blob-cache.js";
import { sameMeta, scanTree, type FileMeta, type ScanLimits, type ScanSummary } from "./tree-scan.js";

export const DEFAULT_CHECKPOINT_MAX_FILES = 20_000;
export const DEFAULT_CHECKPOINT_MAX_MB = 512;

export interface CheckpointSettings {
  /** URLBRIDGE_CHECKPOINTS (default on). */
  enabled: boolean;
  /** URLBRIDGE_CHECKPOINT_MAX_FILES: a project with more regular files is not checkpointed. */
  maxFiles: number;
  /** URLBRIDGE_CHECKPOINT_MAX_MB in bytes: a project whose regular files hold more is not checkpointed. */
  maxBytes: number;
  /** Where the per-project caches live (<state>/checkpoints); emptied when the first checkpoint is taken. */
  dir: string;
}

interface Known {
  meta: FileMeta;
  hash: string;
}

interface ProjectCache {
  blobs: BlobCache;
  /** The last scan's files, by canonical path: what the next scan need not read again. */
  files: Map<string, Known>;
  /** Commands between their two scans; the cache is trimmed only when none is. */
  running: number;
}

/** A project as the before-scan saw it. */
export interface TakenCheckpoint {
  projectId: string;
  root: string;
  reader: Identity | undefined;
  files: Map<string, Known>;
}

export type CheckpointOutcome = { changes: NewFileChange[]; notice?: string } | { notice: string; changes?: undefined };

export class Checkpoints {
  private readonly projects = new Map<string, ProjectCache>();
  private cleared = false;

  constructor(readonly settings: CheckpointSettings) {}

  /** Scans the project before a command; a notice instead when the tree is past the budget. */
  async before(
    project: { id: string; root: string },
    reader: Identity | undefined,
  ): Promise<TakenCheckpoint | { notice: string }> {
    const cache = this.cacheOf(project.id);
    cache.running++;
    const { files, summary } = await this.scanInto(project.id, project.root, reader, (absolute, meta) => {
      const known = cache.files.get(absolute);
      return known && sameMeta(known.meta, meta) && cache.blobs.has(known.hash) ? known : undefined;
    });
    if (summary.over) {
      this.release(project.id, cache, true);
      return { notice: this.noticeOf(summary.over, "") };
    }
    cache.files = files;
    return { projectId: project.id, root: project.root, reader, files };
  }

  /** Scans the project after the command and tells what changed since `taken`, with both sides' bytes. */
  async after(taken: TakenCheckpoint): Promise<CheckpointOutcome> {
    const cache = this.cacheOf(taken.projectId);
    const read = new Map<string, Buffer>();
    const { files: now, summary } = await this.scanInto(
      taken.projectId,
      taken.root,
      taken.reader,
      (absolute, meta) => {
        const before = taken.files.get(absolute);
        return before && sameMeta(before.meta, meta) ? before : undefined;
      },
      read,
    );
    if (summary.over) {
      this.release(taken.projectId, cache, true);
      return { notice: this.noticeOf(summary.over, " after the command") };
    }
    const outcome = changesBetween(taken.files, now, read, (hash) => cache.blobs.get(hash));
    cache.files = now;
    this.release(taken.projectId, cache);
    return outcome;
  }

  /**
   * One scan of a project's tree: a file `unchanged` recognises keeps what it knew, any other file is read, cached by
   * content hash and (when `read` is given) kept there with its bytes. A failed scan releases the command's use of
   * the cache before it throws.
   */
  private async scanInto(
    projectId: string,
    root: string,
    reader: Identity | undefined,
    unchanged: (absolute: string, meta: FileMeta) => Known | undefined,
    read?: Map<string, Buffer>,
  ): Promise<{ files: Map<string, Known>; summary: ScanSummary }> {
    const cache = this.cacheOf(projectId);
    const files = new Map<string, Known>();
    try {
      const summary = await scanTree(root, this.limits(reader), async (absolute, meta, readFile) => {
        const known = unchanged(absolute, meta);
        if (known) {
          files.set(absolute, known);
          return;
        }
        const content = await readFile();
        if (!content) return;
        const hash = contentHash(content);
        cache.blobs.put(hash, content);
        files.set(absolute, { meta, hash });
        read?.set(absolute, content);
      });
      return { files, summary };
    } catch (error) {
      this.release(projectId, cache);
      throw error;
    }
  }

  /** Drops every project's cache (the bridge is shutting down). */
  close(): void {
    for (const cache of this.projects.values()) cache.blobs.drop();
    this.projects.clear();
  }

  private limits(reader: Identity | undefined): ScanLimits {
    return { maxFiles: this.settings.maxFiles, maxBytes: this.settings.maxBytes, ...(reader ? { reader } : {}) };
  }

  private noticeOf(over: "files" | "bytes", when: string): string {
    const limit =
      over === "files"
        ? `${this.settings.maxFiles} files`
        : `${Math.round(this.settings.maxBytes / (1024 * 1024))} MiB`;
    const knob = over === "files" ? "URLBRIDGE_CHECKPOINT_MAX_FILES" : "URLBRIDGE_CHECKPOINT_MAX_MB";
    return `terminal changes not recorded: tree over ${limit}${when} (${knob})`;
  }

  private cacheOf(projectId: string): ProjectCache {
    if (!this.cleared) {
      // Caches an earlier process left: their scans are gone with it.
      fs.rmSync(this.settings.dir, { recursive: true, force: true });
      fs.mkdirSync(this.settings.dir, { recursive: true, mode: 0o700 });
      this.cleared = true;
    }
    let cache = this.projects.get(projectId);
    if (!cache) {
      cache = { blobs: BlobCache.create(path.join(this.settings.dir, projectId)), files: new Map(), running: 0 };
      this.projects.set(projectId, cache);
    }
    return cache;
  }

  /** Ends one command's use of the cache; the last one out keeps only the last scan's blobs, or drops them all. */
  private release(projectId: string, cache: ProjectCache, drop = false): void {
    cache.running--;
    if (cache.running > 0) return;
    if (drop) {
      cache.blobs.drop();
      this.projects.delete(projectId);
      return;
    }
    cache.blobs.retain(new Set([...cache.files.values()].map((k) => k.hash)));
  }
}

const inodeOf = (meta: FileMeta) => `${meta.dev}:${meta.ino}`;

/**
 * The changes from `before` to `now`: a path only in `before` was deleted, only in `now` created, unless the same
 * inode holds the same bytes on both sides (a rename: recorded as a move, source then destination, as the patch
 * records one). `read` has the bytes of every file the after-scan read; `blob` gives the before-scan's.
 */
export function changesBetween(
  before: Map<string, Known>,
  now: Map<string, Known>,
  read: Map<string, Buffer>,
  blob: (hash: string) => Buffer | undefined,
): CheckpointOutcome {
  const changes: NewFileChange[] = [];
  let lost = 0;
  const beforeSide = (known: Known) => {
    const content = blob(known.hash);
    if (!content) lost++;
    return content ? { before: { mode: known.meta.mode, content } } : undefined;
  };
  const gone = new Map<string, string>();
  for (const [absolute, known] of before) if (!now.has(absolute)) gone.set(inodeOf(known.meta), absolute);
  const movedFrom = new Set<string>();
  for (const [absolute, known] of now) {
    const content = read.get(absolute);
    if (!content) continue;
    const after = { after: { mode: known.meta.mode, content } };
    const was = before.get(absolute);
    if (was) {
      if (was.hash === known.hash && was.meta.mode === known.meta.mode) continue;
      const side = beforeSide(was);
      if (side) changes.push({ path: absolute, ...side, ...after });
      continue;
    }
    const source = gone.get(inodeOf(known.meta));
    const sourceKnown = source === undefined ? undefined : before.get(source);
    if (source !== undefined && sourceKnown?.hash === known.hash) {
      const side = beforeSide(sourceKnown);
      if (!side) continue;
      movedFrom.add(source);
      changes.push({ path: source, moved: absolute, ...side });
      changes.push({ path: absolute, moved: source, ...after });
      continue;
    }
    changes.push({ path: absolute, ...after });
  }
  for (const [absolute, known] of before) {
    if (now.has(absolute) || movedFrom.has(absolute)) continue;
    const side = beforeSide(known);
    if (side) changes.push({ path: absolute, ...side });
  }
  return lost > 0
    ? {
        changes,
        notice: `terminal changes partly recorded: the earlier contents of ${lost} changed file(s) were not in the checkpoint cache`,
      }
    : { changes };
}
