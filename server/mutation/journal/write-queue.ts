// The per-project write queue: file mutations of every session that shares a project root run one at a
// time, so two sessions can never interleave the writes of a patch, or read-modify-write the same file.

export class ProjectWriteQueue {
  private readonly tails = new Map<string, Promise<void>>();

  /** Runs fn after every earlier job queued under the same key has settled; keyed by canonical project root. */
  run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const tail = previous.then(() => new Promise<void>((resolve) => (release = resolve)));
    this.tails.set(key, tail);
    return previous.then(async () => {
      try {
        return await fn();
      } finally {
        release();
        if (this.tails.get(key) === tail) this.tails.delete(key);
      }
    });
  }

  /** Number of projects with queued or running work (for tests and diagnostics). */
  get busyProjects(): number {
    return this.tails.size;
  }
}
