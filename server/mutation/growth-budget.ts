// The per-session project growth budget (issue 28): what one session may add to its project. The file tools
// count exactly (new size less old size, deletions give room back) and refuse a change that would pass it; the
// terminal is measured by the change in the project file system's free space while the session's commands run
// (one statfs per session and pass: bounded whatever the project's size; only a fall counts), and the session's
// terminal is stopped past it. Held in memory: a restart of the bridge starts every session's count at 0.
import fs from "node:fs";
import { ErrorCode, ToolError } from "../errors.js";
import type { Logger } from "../log.js";
import type { TerminalProcesses } from "./terminal/terminal-processes.js";

const MIB = 1024 * 1024;

export interface GrowthOverrun {
  budgetBytes: number;
  addedBytes: number;
}

function freeBytes(root: string): number | undefined {
  try {
    const s = fs.statfsSync(root);
    return s.bfree * s.bsize;
  } catch {
    return undefined;
  }
}

const mib = (bytes: number) => (bytes < MIB ? `${bytes} bytes` : `${Math.round((bytes / MIB) * 10) / 10} MiB`);

export class GrowthBudget {
  private readonly added = new Map<string, number>();
  /** Free bytes of the project's file system at the last pass, for each session with commands running. */
  private readonly baselines = new Map<string, { root: string; free: number }>();

  constructor(
    /** URLBRIDGE_SESSION_GROWTH_MB in bytes; 0 turns the budget off. */
    readonly budgetBytes: number,
    private readonly log?: Logger,
  ) {}

  addedBy(sessionId: string): number {
    return this.added.get(sessionId) ?? 0;
  }

  private charge(sessionId: string, bytes: number): void {
    this.added.set(sessionId, Math.max(0, this.addedBy(sessionId) + bytes));
  }

  /** Whether the session is past its budget (its terminal is stopped and refused). */
  exceeded(sessionId: string): GrowthOverrun | undefined {
    const addedBytes = this.addedBy(sessionId);
    return this.budgetBytes > 0 && addedBytes > this.budgetBytes
      ? { budgetBytes: this.budgetBytes, addedBytes }
      : undefined;
  }

  /** A command of this session starts: the free space it is measured from (kept while others of it run). */
  beginCommand(sessionId: string, root: string): void {
    if (this.budgetBytes <= 0 || this.baselines.has(sessionId)) return;
    const free = freeBytes(root);
    if (free !== undefined) this.baselines.set(sessionId, { root, free });
  }

  /** File tools, before writing: refuses when `delta` more bytes would pass the budget. */
  admitWrite(sessionId: string, delta: number): void {
    if (this.budgetBytes <= 0 || delta <= 0) return;
    const addedBytes = this.addedBy(sessionId);
    if (addedBytes + delta > this.budgetBytes)
      throw growthExceeded({ budgetBytes: this.budgetBytes, addedBytes }, delta);
  }

  /** File tools, after a change landed: counts what it added (negative when it made the project smaller). */
  recordWrite(sessionId: string, delta: number): void {
    if (this.budgetBytes > 0) this.charge(sessionId, delta);
  }

  /**
   * One pass over the terminal: charges each session with live trees (and, once more, each whose trees just
   * ended) the fall in its project file system's free space since the last pass; ends the trees of a session
   * past the budget. Returns the sessions it stopped.
   */
  meterTerminal(processes: TerminalProcesses): string[] {
    if (this.budgetBytes <= 0) return [];
    const running = new Map<string, string>();
    for (const tree of processes.list()) if (tree.owner?.root) running.set(tree.owner.sessionId, tree.owner.root);
    const stopped: string[] = [];
    for (const sessionId of new Set([...running.keys(), ...this.baselines.keys()])) {
      const root = running.get(sessionId) ?? this.baselines.get(sessionId)!.root;
      const free = freeBytes(root);
      const before = this.baselines.get(sessionId);
      // Only a fall counts: free space that grows is as likely someone else's deletion as this session's.
      if (free !== undefined && before) this.charge(sessionId, Math.max(0, before.free - free));
      if (running.has(sessionId) && free !== undefined) this.baselines.set(sessionId, { root, free });
      else this.baselines.delete(sessionId);
      const over = this.exceeded(sessionId);
      if (over && running.has(sessionId)) {
        this.log?.warn("a session's terminal passed its project growth budget; its processes were ended", {
          sessionId,
          ...over,
        });
        void processes.end({ sessionId }, "growth");
        stopped.push(sessionId);
      }
    }
    return stopped;
  }
}

/** The answer past the budget: what was added, the budget, and how each side gets room. */
export function growthExceeded(
  over: GrowthOverrun,
  delta?: number,
  extra: { started?: boolean; output?: Record<string, unknown> } = {},
): ToolError {
  const wanted = delta === undefined ? "" : ` This change would add ${mib(delta)} more.`;
  return new ToolError(
    ErrorCode.growthBudgetExceeded,
    `This session has added ${mib(over.addedBytes)} to its project; its growth budget is ${mib(over.budgetBytes)}.${wanted} Delete files this session made (a patch with Delete File gives the room back), or ask the operator to raise URLBRIDGE_SESSION_GROWTH_MB (0 turns it off) and restart the bridge.`,
    {
      detail: {
        budgetBytes: over.budgetBytes,
        addedBytes: over.addedBytes,
        ...(delta === undefined ? {} : { delta }),
        ...(extra.started === undefined ? {} : { started: extra.started }),
      },
      agentAction: "correct_request",
      ...(extra.output ? { extra: extra.output } : {}),
    },
  );
}
