// A project's checkpoint cache on disk: the bytes of every file of its last scan, content-addressed (sha256), so
// that a terminal command's *before* contents are at hand when the command has changed the file. A copy of what
// the project holds, in a private folder of the bridge's (0700, files 0600), never inside the project; not
// durable (no fsync): the first checkpoint a bridge process takes of a project starts it afresh.
import fs from "node:fs";
import path from "node:path";

export class BlobCache {
  private readonly sizes = new Map<string, number>();
  private total = 0;

  private constructor(private readonly dir: string) {}

  /** A fresh, empty cache in `dir` (whatever an earlier process left there is removed). */
  static create(dir: string): BlobCache {
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    return new BlobCache(dir);
  }

  /** Bytes the cache holds. */
  get bytes(): number {
    return this.total;
  }

  has(hash: string): boolean {
    return this.sizes.has(hash);
  }

  put(hash: string, content: Buffer): void {
    if (this.sizes.has(hash)) return;
    const file = path.join(this.dir, hash);
    const temp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(temp, content, { mode: 0o600 });
    fs.renameSync(temp, file);
    this.sizes.set(hash, content.length);
    this.total += content.length;
  }

  get(hash: string): Buffer | undefined {
    if (!this.sizes.has(hash)) return undefined;
    try {
      return fs.readFileSync(path.join(this.dir, hash));
    } catch {
      return undefined;
    }
  }

  /** Removes every blob not in `keep`. */
  retain(keep: Set<string>): void {
    for (const [hash, size] of this.sizes) {
      if (keep.has(hash)) continue;
      fs.rmSync(path.join(this.dir, hash), { force: true });
      this.sizes.delete(hash);
      this.total -= size;
    }
  }

  /** Removes the cache and its folder. */
  drop(): void {
    fs.rmSync(this.dir, { recursive: true, force: true });
    this.sizes.clear();
    this.total = 0;
  }
}
