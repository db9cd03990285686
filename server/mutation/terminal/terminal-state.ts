// The terminal's state for one bridge: the foreground gate, the registry of live process trees, and in container
// mode the runner for project containers. Its MutationRuntime owns it, so two bridges in one process share none.
import type { Config } from "../../config.js";
import { ContainerTerminal } from "./terminal-container.js";
import { TerminalGate, type TerminalGateOptions } from "./terminal-gate.js";
import { TerminalProcesses } from "./terminal-processes.js";

export interface TerminalState {
  gate: TerminalGate;
  processes: TerminalProcesses;
  /** Set when URLBRIDGE_SANDBOX=container: /x runs each command in its project's warm container. */
  container: ContainerTerminal | undefined;
}

export interface TerminalStateOptions {
  /** The gate's limits; MAX_FOREGROUND_PROCESSES, MAX_QUEUED_FOREGROUND and MAX_GATE_WAIT_MS by default. */
  gate?: TerminalGateOptions;
  /** URLBRIDGE_SANDBOX=container: the settings of the project containers commands run in. */
  container?: Pick<Config, "sandboxContainer" | "agentFallback">;
}

export function createTerminalState(options: TerminalStateOptions = {}): TerminalState {
  const processes = new TerminalProcesses();
  return {
    gate: new TerminalGate(options.gate),
    processes,
    container: options.container ? new ContainerTerminal(options.container, processes) : undefined,
  };
}
