// The per-session memory budget (issue 28): every WATCHDOG_INTERVAL_MS, while terminal trees run, sums the resident
// memory of each session's trees (from /proc) plus what the scratch tmpfs holds, and ends a session's processes
// once that passes the budget. The kernel's OOM killer is the backstop between two passes: agents carry
// oom_score_adj 1000, so it picks them before the bridge (native/sandbox/agent-limits.h).
import fs from "node:fs";
import type { Logger } from "../../log.js";
import { tmpfsUsedBytes } from "../../sandbox/agent-limits.js";
import { canInspectProcesses, listTrees } from "./process-tree.js";
import type { TerminalProcesses } from "./terminal-processes.js";

/** Time between two passes; an allocation faster than this meets the OOM killer's order instead. */
export const WATCHDOG_INTERVAL_MS = 500;
/** How long an overrun is remembered for the answers of the commands it ended. */
const OVERRUN_MEMORY_MS = 10 * 60_000;

/** Why a session's processes were ended, as their answers report it. */
export interface MemoryOverrun {
  budgetBytes: number;
  /** Resident memory of the session's processes at the pass that ended them (RSS: shared pages count in each). */
  processBytes: number;
  /** What the scratch tmpfs held then (0 when the scratch folder is not a tmpfs). */
  scratchBytes: number;
  processes: number;
  at: number;
}

export interface MemoryWatchdogOptions {
  budgetBytes: number;
  scratchDir: string;
  log?: Logger;
}

/** VmRSS of one process in bytes; 0 once it is gone (or a kernel thread). */
function residentBytes(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

export class MemoryWatchdog {
  private readonly overruns = new Map<string, MemoryOverrun>();

  constructor(
    private readonly processes: TerminalProcesses,
    private readonly options: MemoryWatchdogOptions,
  ) {}

  /** One pass (terminal-state.ts runs one every WATCHDOG_INTERVAL_MS): ends every session over its budget. */
  check(): MemoryOverrun[] {
    if (!canInspectProcesses) return [];
    const trees = this.processes.list().filter((t) => t.owner);
    if (trees.length === 0) return [];
    const members = listTrees(trees.map((t) => t.pid));
    const bySession = new Map<string, { bytes: number; processes: number }>();
    for (const tree of trees) {
      const pids = members.get(tree.pid) ?? [];
      const sum = bySession.get(tree.owner!.sessionId) ?? { bytes: 0, processes: 0 };
      for (const pid of pids) sum.bytes += residentBytes(pid);
      sum.processes += pids.length;
      bySession.set(tree.owner!.sessionId, sum);
    }
    const scratchBytes = tmpfsUsedBytes(this.options.scratchDir);
    const found: MemoryOverrun[] = [];
    const now = Date.now();
    for (const [sessionId, sum] of bySession) {
      if (sum.bytes + scratchBytes <= this.options.budgetBytes) continue;
      const overrun = {
        budgetBytes: this.options.budgetBytes,
        processBytes: sum.bytes,
        scratchBytes,
        processes: sum.processes,
        at: now,
      };
      this.overruns.set(sessionId, overrun);
      found.push(overrun);
      this.options.log?.warn("a session's terminal processes passed the memory budget; they were ended", {
        sessionId,
        ...overrun,
      });
      void this.processes.end({ sessionId }, "memory");
    }
    for (const [sessionId, overrun] of this.overruns)
      if (now - overrun.at > OVERRUN_MEMORY_MS) this.overruns.delete(sessionId);
    return found;
  }

  /** The last overrun that ended this session's processes, for the answer of a command it ended. */
  overrunOf(sessionId: string): MemoryOverrun | undefined {
    return this.overruns.get(sessionId);
  }
}
