// The per-project write queue: file mutations of every session that shares a project root run in admission order,
// so two sessions can never interleave the writes of a patch, or read-modify-write the same file. A job may name a
// lane (one file's canonical path): jobs of different lanes run side by side, so an edit of one file does not wait
// for another file's fsyncs; a job without a lane runs alone, after every job queued before it and before any after.

interface ProjectTails {
  /** Settles when the last job without a lane (and everything queued before it) has. */
  barrier: Promise<void>;
  /** Per lane, when its last job settles. */
  lanes: Map<string, Promise<void>>;
  /** Jobs with a lane queued since the barrier, still unsettled: what the next job without a lane waits for. */
  open: Set<Promise<void>>;
}

export class ProjectWriteQueue {
  private readonly projects = new Map<string, ProjectTails>();

  /**
   * Runs fn after every earlier job queued under the same key that it must follow has settled: with `lane`, the
   * project's last lane-less job and the lane's own last job; without, every earlier job of the project.
   */
  run<T>(key: string, fn: () => Promise<T>, lane?: string): Promise<T> {
    let tails = this.projects.get(key);
    if (!tails) {
      tails = { barrier: Promise.resolve(), lanes: new Map(), open: new Set() };
      this.projects.set(key, tails);
    }
    const project = tails;
    const previous =
      lane === undefined
        ? Promise.all([project.barrier, ...project.open]).then(() => undefined)
        : Promise.all([project.barrier, project.lanes.get(lane)]).then(() => undefined);
    let release!: () => void;
    const done = new Promise<void>((resolve) => (release = resolve));
    const tail = previous.then(() => done);
    if (lane === undefined) {
      project.barrier = tail;
      project.lanes.clear();
      project.open.clear();
    } else {
      project.lanes.set(lane, tail);
      project.open.add(tail);
    }
    return previous.then(async () => {
      try {
        return await fn();
      } finally {
        release();
        this.settled(key, project, tail, lane);
      }
    });
  }

  /** Number of projects with queued or running work (for tests and diagnostics). */
  get busyProjects(): number {
    return this.projects.size;
  }

  private settled(key: string, project: ProjectTails, tail: Promise<void>, lane: string | undefined): void {
    if (lane !== undefined) {
      project.open.delete(tail);
      if (project.lanes.get(lane) === tail) project.lanes.delete(lane);
    }
    const idle =
      project.open.size === 0 && project.lanes.size === 0 && (lane !== undefined || project.barrier === tail);
    // A lane job settling leaves the barrier as it was: the project is idle only if that barrier has settled too.
    if (!idle) return;
    if (lane === undefined) {
      if (this.projects.get(key) === project) this.projects.delete(key);
      return;
    }
    const barrier = project.barrier;
    void barrier.then(() => {
      const stillIdle = project.barrier === barrier && project.open.size === 0 && project.lanes.size === 0;
      if (stillIdle && this.projects.get(key) === project) this.projects.delete(key);
    });
  }
}
