// Every live terminal tree (foreground and bg=1), keyed by the session and project that started it, so that
// disabling, rotating or deleting a session, deleting a project or removing its terminal permission, and the
// bridge's shutdown end what they started. The pid is the launcher's: ending it ends the whole tree. A tree whose
// launcher is still starting (the resident spawner's answer is awaited) is held as a pending start, which those
// ends reach too: it is ended as soon as it has a pid. One registry per bridge, owned by its MutationRuntime
// (terminal-state.ts).

export interface TreeOwner {
  sessionId: string;
  projectId: string;
  /** The project's root in the bridge: where the growth meter measures what the session's commands add. */
  root?: string;
}

export interface LiveTree {
  pid: number;
  kind: "foreground" | "background" | "pty";
  owner: TreeOwner | undefined;
  command: string;
  cwd: string;
  startedAt: number;
  logFile?: string;
  /** Ends the tree; resolves once it is gone. */
  stop(reason: EndReason): Promise<void>;
}

/** memory: the session passed its memory budget (memory-watchdog.ts); growth: its project growth budget (growth-budget.ts). */
export type EndReason = "stopped" | "scope_ended" | "shutdown" | "memory" | "growth";

export interface TreeFilter {
  sessionId?: string;
  projectId?: string;
  kind?: LiveTree["kind"];
}

/** A tree being started: its pid is not known yet. */
export interface PendingStart {
  /** Its launcher runs: it joins the registry (ended at once if an end reached it meanwhile); returns what forgets it. */
  started(tree: LiveTree): () => void;
  /** It did not start (spawn failed, or the spawner was lost): nothing to end. */
  abandoned(): void;
}

interface Starting {
  kind: LiveTree["kind"];
  owner: TreeOwner | undefined;
  /** The first end that reached it before it had a pid. */
  reason: EndReason | undefined;
  /** Resolves once it started and (when ended meanwhile) was stopped, or was abandoned. */
  settled: Promise<void>;
}

function matches(tree: Pick<LiveTree, "kind" | "owner">, filter: TreeFilter): boolean {
  if (filter.kind && tree.kind !== filter.kind) return false;
  if (filter.sessionId && tree.owner?.sessionId !== filter.sessionId) return false;
  if (filter.projectId && tree.owner?.projectId !== filter.projectId) return false;
  return true;
}

export class TerminalProcesses {
  private readonly trees = new Map<number, LiveTree>();
  private readonly starting = new Set<Starting>();

  /** Registers a tree; the returned function forgets it (call when the launcher has exited). */
  add(tree: LiveTree): () => void {
    this.trees.set(tree.pid, tree);
    return () => {
      if (this.trees.get(tree.pid) === tree) this.trees.delete(tree.pid);
    };
  }

  /** Holds a tree from before its launcher has a pid, so that scope ends and shutdown reach it too. */
  begin(kind: LiveTree["kind"], owner: TreeOwner | undefined): PendingStart {
    let settle!: () => void;
    const entry: Starting = { kind, owner, reason: undefined, settled: new Promise((resolve) => (settle = resolve)) };
    this.starting.add(entry);
    return {
      started: (tree) => {
        this.starting.delete(entry);
        const forget = this.add(tree);
        if (entry.reason) void tree.stop(entry.reason).then(settle);
        else settle();
        return forget;
      },
      abandoned: () => {
        this.starting.delete(entry);
        settle();
      },
    };
  }

  /** How many trees match, those still starting included (the background limit counts both). */
  count(filter: TreeFilter = {}): number {
    return this.list(filter).length + [...this.starting].filter((s) => matches(s, filter)).length;
  }

  list(filter: TreeFilter = {}): LiveTree[] {
    return [...this.trees.values()].filter((t) => matches(t, filter));
  }

  get(pid: number): LiveTree | undefined {
    return this.trees.get(pid);
  }

  /**
   * Ends every matching tree, and every matching one still starting once it has started (a start awaits the
   * spawner's answer at most REPLY_TIMEOUT_MS); resolves with how many were ended. An empty filter ends everything.
   */
  async end(filter: TreeFilter, reason: EndReason = "scope_ended"): Promise<number> {
    const doomed = this.list(filter);
    const starting = [...this.starting].filter((s) => matches(s, filter));
    for (const entry of starting) entry.reason ??= reason;
    await Promise.all([...doomed.map((t) => t.stop(reason)), ...starting.map((s) => s.settled)]);
    return doomed.length + starting.length;
  }
}
