// A project's checkpoint cache on disk: the bytes of every file of its last scan, content-addressed (sha256), so
// that a terminal command's *before* contents are at hand when the command has changed the file. One append-only
// pack file with its index in memory: a first scan of 50,000 files appends to one descriptor instead of creating
// 50,000 files (docs/PERFORMANCE.md). A copy of what the project holds, in a private folder of the bridge's (0700,
// the pack 0600), never inside the project; not durable (no fsync): a bridge process starts its caches afresh.
import fs from "node:fs";
import path from "node:path";

/** The pack is rewritten with only the live blobs once the dead ones outweigh them by this many bytes at least. */
const COMPACT_MIN_DEAD_BYTES = 16 * 1024 * 1024;
const PACK = "pack";

interface Entry {
  offset: number;
  size: number;
}

export class BlobCache {
  private index = new Map<string, Entry>();
  private end = 0;
  private live = 0;

  private constructor(
    private readonly dir: string,
    private fd: number,
  ) {}

  /** A fresh, empty cache in `dir` (whatever an earlier process left there is removed). */
  static create(dir: string): BlobCache {
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    return new BlobCache(dir, fs.openSync(path.join(dir, PACK), "w+", 0o600));
  }

  /** Bytes of the blobs the cache holds (the pack may hold as much again of dropped ones, until compacted). */
  get bytes(): number {
    return this.live;
  }

  has(hash: string): boolean {
    return this.index.has(hash);
  }

  put(hash: string, content: Buffer): void {
    if (this.index.has(hash)) return;
    writeAll(this.fd, content, this.end);
    this.index.set(hash, { offset: this.end, size: content.length });
    this.end += content.length;
    this.live += content.length;
  }

  get(hash: string): Buffer | undefined {
    const entry = this.index.get(hash);
    if (!entry) return undefined;
    const buffer = Buffer.allocUnsafe(entry.size);
    let filled = 0;
    while (filled < entry.size) {
      const n = fs.readSync(this.fd, buffer, filled, entry.size - filled, entry.offset + filled);
      if (n === 0) return undefined;
      filled += n;
    }
    return buffer;
  }

  /** Forgets every blob not in `keep`; rewrites the pack once the forgotten ones outweigh the kept. */
  retain(keep: Set<string>): void {
    for (const [hash, entry] of this.index) {
      if (keep.has(hash)) continue;
      this.index.delete(hash);
      this.live -= entry.size;
    }
    const dead = this.end - this.live;
    if (dead > this.live && dead >= COMPACT_MIN_DEAD_BYTES) this.compact();
  }

  /** Closes the pack and removes the cache's folder. */
  drop(): void {
    fs.closeSync(this.fd);
    fs.rmSync(this.dir, { recursive: true, force: true });
    this.index.clear();
    this.end = this.live = 0;
  }

  private compact(): void {
    const next = path.join(this.dir, `${PACK}.next`);
    const fd = fs.openSync(next, "w+", 0o600);
    const index = new Map<string, Entry>();
    let end = 0;
    for (const [hash, entry] of this.index) {
      const content = this.get(hash);
      if (!content) continue;
      writeAll(fd, content, end);
      index.set(hash, { offset: end, size: entry.size });
      end += entry.size;
    }
    fs.renameSync(next, path.join(this.dir, PACK));
    fs.closeSync(this.fd);
    this.fd = fd;
    this.index = index;
    this.end = this.live = end;
  }
}

function writeAll(fd: number, content: Buffer, position: number): void {
  let written = 0;
  while (written < content.length)
    written += fs.writeSync(fd, content, written, content.length - written, position + written);
}
