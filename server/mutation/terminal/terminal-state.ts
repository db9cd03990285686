// The terminal's state for one bridge: the foreground gate, the registry of live process trees, and in container
// mode the runner for project containers. Its MutationRuntime owns it, so two bridges in one process share none.
import type { Config } from "../../config.js";
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
  /** Set when URLBRIDGE_SANDBOX=container: /x runs each command in its project's warm container. */
  container: ContainerTerminal | undefined;
}

export interface TerminalStateOptions {
  /** The gate's limits; MAX_FOREGROUND_PROCESSES, MAX_QUEUED_FOREGROUND and MAX_GATE_WAIT_MS by default. */
  gate?: TerminalGateOptions;
  /** URLBRIDGE_SANDBOX=container: the settings of the project containers commands run in. */
  container?: Pick<Config, "sandboxContainer" | "agentFallback">;
  /** When an untouched pty=1 process is ended (URLBRIDGE_PTY_IDLE_MS); DEFAULT_PTY_IDLE_MS by default. */
  ptyIdleMs?: number;
}

export function createTerminalState(options: TerminalStateOptions = {}): TerminalState {
  const processes = new TerminalProcesses();
  return {
    gate: new TerminalGate(options.gate),
    processes,
    ptys: new PtyRegistry(options.ptyIdleMs ?? DEFAULT_PTY_IDLE_MS, KILL_GRACE_MS + 3000),
    container: options.container ? new ContainerTerminal(options.container, processes) : undefined,
  };
}
