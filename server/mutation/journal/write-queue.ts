// The per-project write queue: file mutations of every session that shares a project root run one at a
// time, so two sessions can never interleave the writes of a patch, or read-modify-write the same file.

export class ProjectWriteQueue {
  private readonly tails = new Map<string, Promise<void>>();
  /** Jobs queued or running per key. */
  private readonly counts = new Map<string, number>();

  /** Runs fn after every earlier job queued under the same key has settled; keyed by canonical project root. */
  run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    const previous = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const tail = previous.then(() => new Promise<void>((resolve) => (release = resolve)));
    this.tails.set(key, tail);
    return previous.then(async () => {
      try {
        return await fn();
      } finally {
        const left = (this.counts.get(key) ?? 1) - 1;
        if (left > 0) this.counts.set(key, left);
        else this.counts.delete(key);
        release();
        if (this.tails.get(key) === tail) this.tails.delete(key);
      }
    });
  }

  /** Jobs of this key waiting behind the one running now (0 when it runs alone, or nothing runs). */
  waiting(key: string): number {
    return Math.max(0, (this.counts.get(key) ?? 0) - 1);
  }

  /** Number of projects with queued or running work (for tests and diagnostics). */
  get busyProjects(): number {
    return this.tails.size;
  }
}
