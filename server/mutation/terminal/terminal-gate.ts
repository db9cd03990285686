// The gate for a bridge's foreground terminal processes: at most MAX_FOREGROUND_PROCESSES run at once across
// every session and project; later ones wait in a bounded FIFO queue (their intent stays pending) or are refused.
// One per bridge, owned by its MutationRuntime (terminal-state.ts); a bridge process runs one bridge.
import { ErrorCode, ToolError } from "../../errors.js";

/** Foreground processes running at once, across all of a bridge's sessions (the reference's global terminal cap). */
export const MAX_FOREGROUND_PROCESSES = 2;
/** Foreground commands that may wait for a slot; one more is refused with terminal_busy. */
export const MAX_QUEUED_FOREGROUND = 16;
/** Longest a queued command waits for a slot before it fails with terminal_busy (it never ran). */
export const MAX_GATE_WAIT_MS = 10 * 60_000;

export type ReleaseSlot = () => void;

export interface AcquireOptions {
  /** Aborting gives up the place in the queue (shutdown). */
  signal?: AbortSignal;
  /** Longest this caller waits in the queue (capped by the gate's own maxWaitMs); terminal_busy afterwards. */
  maxWaitMs?: number;
  /** Called once when the caller has to wait, with its 1-based queue position. */
  onQueued?: (position: number) => void;
}

export interface GateSnapshot {
  slots: number;
  running: number;
  queued: number;
}

interface Waiter {
  grant: (release: ReleaseSlot) => void;
  fail: (error: unknown) => void;
}

export interface TerminalGateOptions {
  slots?: number;
  maxQueued?: number;
  maxWaitMs?: number;
}

export class TerminalGate {
  readonly slots: number;
  readonly maxQueued: number;
  readonly maxWaitMs: number;
  private running = 0;
  private readonly queue: Waiter[] = [];

  constructor(options: TerminalGateOptions = {}) {
    this.slots = options.slots ?? MAX_FOREGROUND_PROCESSES;
    this.maxQueued = options.maxQueued ?? MAX_QUEUED_FOREGROUND;
    this.maxWaitMs = options.maxWaitMs ?? MAX_GATE_WAIT_MS;
  }

  snapshot(): GateSnapshot {
    return { slots: this.slots, running: this.running, queued: this.queue.length };
  }

  /** Resolves with a release function once a slot is held; the caller must call it exactly when its process ends. */
  acquire(options: AcquireOptions = {}): Promise<ReleaseSlot> {
    options.signal?.throwIfAborted();
    if (this.running < this.slots) {
      this.running += 1;
      return Promise.resolve(this.releaser());
    }
    if (this.queue.length >= this.maxQueued) {
      return Promise.reject(
        new ToolError(
          ErrorCode.terminalBusy,
          `${this.slots} foreground commands are running and ${this.queue.length} are already waiting. Retry later, or launch long-running work with bg=1.`,
          { detail: this.snapshot(), retryable: true, agentAction: "wait_and_retry" },
        ),
      );
    }
    const waitMs = Math.min(this.maxWaitMs, options.maxWaitMs ?? this.maxWaitMs);
    return new Promise<ReleaseSlot>((resolve, reject) => {
      const waiter: Waiter = {
        grant: (release) => {
          cleanup();
          resolve(release);
        },
        fail: (error) => {
          cleanup();
          const at = this.queue.indexOf(waiter);
          if (at !== -1) this.queue.splice(at, 1);
          reject(error);
        },
      };
      const timer = setTimeout(
        () =>
          waiter.fail(
            new ToolError(ErrorCode.terminalBusy, `No foreground slot freed within ${waitMs} ms; the command did not run. Retry later, or launch long-running work with bg=1.`, {
              detail: this.snapshot(),
              retryable: true,
              agentAction: "wait_and_retry",
            }),
          ),
        waitMs,
      );
      timer.unref();
      const onAbort = () => waiter.fail(options.signal!.reason);
      options.signal?.addEventListener("abort", onAbort, { once: true });
      const cleanup = () => {
        clearTimeout(timer);
        options.signal?.removeEventListener("abort", onAbort);
      };
      this.queue.push(waiter);
      options.onQueued?.(this.queue.length);
    });
  }

  private releaser(): ReleaseSlot {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.queue.shift();
      // The slot passes straight to the next waiter, so a newcomer can never jump the queue.
      if (next) next.grant(this.releaser());
      else this.running -= 1;
    };
  }
}
