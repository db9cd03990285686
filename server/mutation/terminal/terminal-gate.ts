// The gate for a bridge's foreground terminal processes: at most MAX_FOREGROUND_PROCESSES run at once across
// every session and project; later ones wait in a bounded FIFO queue (their intent stays pending) or are refused.
// One per bridge, owned by its MutationRuntime (terminal-state.ts); a bridge process runs one bridge.
import { ErrorCode, ToolError } from "../../errors.js";
import { SlotGate } from "../../kernel/tool/slot-gate.js";

/** Foreground processes running at once, across all of a bridge's sessions (the reference's global terminal cap). */
export const MAX_FOREGROUND_PROCESSES = 2;
/** Foreground commands that may wait for a slot; one more is refused with terminal_busy. */
export const MAX_QUEUED_FOREGROUND = 16;
/** Longest a queued command waits for a slot before it fails with terminal_busy (it never ran). */
export const MAX_GATE_WAIT_MS = 10 * 60_000;

export interface TerminalGateOptions {
  slots?: number;
  maxQueued?: number;
  maxWaitMs?: number;
}

/** The bridge's foreground slots: one FIFO queue (commands take no turns by session), terminal_busy refusals. */
export class TerminalGate extends SlotGate {
  constructor(options: TerminalGateOptions = {}) {
    super({
      slots: options.slots ?? MAX_FOREGROUND_PROCESSES,
      maxQueued: options.maxQueued ?? MAX_QUEUED_FOREGROUND,
      maxWaitMs: options.maxWaitMs ?? MAX_GATE_WAIT_MS,
      full: (snapshot) =>
        new ToolError(
          ErrorCode.terminalBusy,
          `${snapshot.slots} foreground commands are running and ${snapshot.queued} are already waiting. Retry later, or launch long-running work with bg=1.`,
          {
            detail: snapshot,
            retryable: true,
            agentAction: "wait_and_retry",
          },
        ),
      timedOut: (snapshot, waitMs) =>
        new ToolError(
          ErrorCode.terminalBusy,
          `No foreground slot freed within ${waitMs} ms; the command did not run. Retry later, or launch long-running work with bg=1.`,
          {
            detail: snapshot,
            retryable: true,
            agentAction: "wait_and_retry",
          },
        ),
    });
  }
}
