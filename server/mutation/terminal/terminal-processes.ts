// Every live terminal tree (foreground and bg=1), keyed by the session and project that started it, so that
// disabling, rotating or deleting a session, deleting a project or removing its terminal permission, and the
// bridge's shutdown end what they started. The pid is the launcher's: ending it ends the whole tree. One registry
// per bridge, owned by its MutationRuntime (terminal-state.ts).

export interface TreeOwner {
  sessionId: string;
  projectId: string;
}

export interface LiveTree {
  pid: number;
  kind: "foreground" | "background";
  owner: TreeOwner | undefined;
  command: string;
  cwd: string;
  startedAt: number;
  logFile?: string;
  /** Ends the tree; resolves once it is gone. */
  stop(reason: EndReason): Promise<void>;
}

export type EndReason = "stopped" | "scope_ended" | "shutdown";

export interface TreeFilter {
  sessionId?: string;
  projectId?: string;
  kind?: LiveTree["kind"];
}

function matches(tree: LiveTree, filter: TreeFilter): boolean {
  if (filter.kind && tree.kind !== filter.kind) return false;
  if (filter.sessionId && tree.owner?.sessionId !== filter.sessionId) return false;
  if (filter.projectId && tree.owner?.projectId !== filter.projectId) return false;
  return true;
}

export class TerminalProcesses {
  private readonly trees = new Map<number, LiveTree>();

  /** Registers a tree; the returned function forgets it (call when the launcher has exited). */
  add(tree: LiveTree): () => void {
    this.trees.set(tree.pid, tree);
    return () => {
      if (this.trees.get(tree.pid) === tree) this.trees.delete(tree.pid);
    };
  }

  list(filter: TreeFilter = {}): LiveTree[] {
    return [...this.trees.values()].filter((t) => matches(t, filter));
  }

  get(pid: number): LiveTree | undefined {
    return this.trees.get(pid);
  }

  /** Ends every matching tree; resolves with how many were ended. An empty filter ends everything. */
  async end(filter: TreeFilter, reason: EndReason = "scope_ended"): Promise<number> {
    const doomed = this.list(filter);
    await Promise.all(doomed.map((t) => t.stop(reason)));
    return doomed.length;
  }
}
