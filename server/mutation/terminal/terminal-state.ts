// The terminal's state for one bridge: the foreground gate, the registry of live process trees, the agent limits
// that watch them (memory budget, project growth budget), and in container mode the runner for project
// containers. Its MutationRuntime owns it, so two bridges in one process share none.
import type { Config } from "../../config.js";
import { RegexWorker } from "../../kernel/search/regex-worker.js";
import type { Logger } from "../../log.js";
import { GrowthBudget } from "../growth-budget.js";
import { MemoryWatchdog, WATCHDOG_INTERVAL_MS } from "./memory-watchdog.js";
import { ContainerTerminal } from "./terminal-container.js";
import { TerminalGate, type TerminalGateOptions } from "./terminal-gate.js";
import { TerminalProcesses } from "./terminal-processes.js";
import { KILL_GRACE_MS } from "./process-tree.js";
import { DEFAULT_PTY_IDLE_MS } from "./pty/pty-limits.js";
import { PtyRegistry } from "./pty/pty-registry.js";

export interface TerminalState {
  gate: TerminalGate;
  processes: TerminalProcesses;
  /** Interactive (pty=1) processes: their screens, replay and idle end. */
  ptys: PtyRegistry;
  /** Runs the pattern= waits of /i off the main thread, deadline-bounded like search's regexes. */
  regex: RegexWorker;
  /** Set when URLBRIDGE_SANDBOX=container: /x runs each command in its project's warm container. */
  container: ContainerTerminal | undefined;
  /** The per-session memory budget (native mode with a budget only; the sandbox container has its own limit). */
  watchdog: MemoryWatchdog | undefined;
  /** What each session may add to its project: the file tools and the terminal both count here. */
  growth: GrowthBudget;
  /** Starts the passes of the watchdog and the terminal's growth meter (while trees run); stopLimits ends them. */
  startLimits(): void;
  stopLimits(): void;
}

export interface TerminalStateOptions {
  /** The gate's limits; MAX_FOREGROUND_PROCESSES, MAX_QUEUED_FOREGROUND and MAX_GATE_WAIT_MS by default. */
  gate?: TerminalGateOptions;
  /** URLBRIDGE_SANDBOX=container: the settings of the project containers commands run in. */
  container?: Pick<Config, "sandboxContainer" | "agentFallback">;
  /** The agent limits (URLBRIDGE_AGENT_MEMORY_MB, URLBRIDGE_SESSION_GROWTH_MB); none when absent. */
  limits?: { memoryBytes: number; growthBytes: number; scratchDir: string; log?: Logger; intervalMs?: number };
  /** When an untouched pty=1 process is ended (URLBRIDGE_PTY_IDLE_MS); DEFAULT_PTY_IDLE_MS by default. */
  ptyIdleMs?: number;
}

export function createTerminalState(options: TerminalStateOptions = {}): TerminalState {
  const processes = new TerminalProcesses();
  const limits = options.limits;
  const watchdog =
    limits && limits.memoryBytes > 0 && !options.container
      ? new MemoryWatchdog(processes, {
          budgetBytes: limits.memoryBytes,
          scratchDir: limits.scratchDir,
          ...(limits.log ? { log: limits.log } : {}),
        })
      : undefined;
  const growth = new GrowthBudget(limits?.growthBytes ?? 0, limits?.log);
  let timer: NodeJS.Timeout | undefined;
  return {
    gate: new TerminalGate(options.gate),
    processes,
    ptys: new PtyRegistry(options.ptyIdleMs ?? DEFAULT_PTY_IDLE_MS, KILL_GRACE_MS + 3000),
    regex: new RegexWorker(),
    container: options.container ? new ContainerTerminal(options.container, processes) : undefined,
    watchdog,
    growth,
    startLimits() {
      if (timer || (!watchdog && growth.budgetBytes <= 0)) return;
      timer = setInterval(() => {
        watchdog?.check();
        growth.meterTerminal(processes);
      }, limits?.intervalMs ?? WATCHDOG_INTERVAL_MS);
      timer.unref();
    },
    stopLimits() {
      clearInterval(timer);
      timer = undefined;
    },
  };
}
