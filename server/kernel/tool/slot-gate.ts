// A bounded number of slots shared by every session of a bridge, for work that costs the whole machine (a
// terminal command, a ripgrep process): at most `slots` run at once, later callers wait in a bounded queue for at
// most `maxWaitMs`, and the queue is served in turns between callers' keys (a session), so one session's flood
// waits behind its own calls, not in front of everyone else's. Callers without a key share one: plain FIFO.
import type { ToolError } from "../../errors.js";

export type ReleaseSlot = () => void;

export interface GateSnapshot {
  slots: number;
  running: number;
  queued: number;
}

export interface SlotAcquireOptions {
  /** Aborting gives up the place in the queue (shutdown, a client gone). */
  signal?: AbortSignal;
  /** Longest this caller waits in the queue (capped by the gate's own maxWaitMs). */
  maxWaitMs?: number;
  /** Called once when the caller has to wait, with the number of callers waiting, itself included. */
  onQueued?: (position: number) => void;
  /** Whose turn this is (a session id): waiting keys take turns. Default: one shared key. */
  key?: string;
}

export interface SlotGateOptions {
  slots: number;
  maxQueued: number;
  maxWaitMs: number;
  /** The refusal when the queue is full. */
  full: (snapshot: GateSnapshot) => ToolError;
  /** The failure when no slot freed within `waitMs`. */
  timedOut: (snapshot: GateSnapshot, waitMs: number) => ToolError;
}

interface Waiter {
  key: string;
  grant: (release: ReleaseSlot) => void;
  fail: (error: unknown) => void;
}

const SHARED_KEY = "";

export class SlotGate {
  readonly slots: number;
  readonly maxQueued: number;
  readonly maxWaitMs: number;
  private running = 0;
  private queued = 0;
  /** Waiters by key, each FIFO; `turns` lists the keys with waiters, the next to be served first. */
  private readonly waiting = new Map<string, Waiter[]>();
  private readonly turns: string[] = [];

  constructor(private readonly options: SlotGateOptions) {
    this.slots = options.slots;
    this.maxQueued = options.maxQueued;
    this.maxWaitMs = options.maxWaitMs;
  }

  snapshot(): GateSnapshot {
    return { slots: this.slots, running: this.running, queued: this.queued };
  }

  /** Resolves with a release function once a slot is held; the caller must call it exactly when its work ends. */
  acquire(options: SlotAcquireOptions = {}): Promise<ReleaseSlot> {
    options.signal?.throwIfAborted();
    if (this.running < this.slots) {
      this.running += 1;
      return Promise.resolve(this.releaser());
    }
    if (this.queued >= this.maxQueued) return Promise.reject(this.options.full(this.snapshot()));
    const waitMs = Math.min(this.maxWaitMs, options.maxWaitMs ?? this.maxWaitMs);
    const key = options.key ?? SHARED_KEY;
    return new Promise<ReleaseSlot>((resolve, reject) => {
      const waiter: Waiter = {
        key,
        grant: (release) => {
          cleanup();
          resolve(release);
        },
        fail: (error) => {
          cleanup();
          this.remove(waiter);
          reject(error);
        },
      };
      const timer = setTimeout(() => waiter.fail(this.options.timedOut(this.snapshot(), waitMs)), waitMs);
      timer.unref();
      const onAbort = () => waiter.fail(options.signal!.reason);
      options.signal?.addEventListener("abort", onAbort, { once: true });
      const cleanup = () => {
        clearTimeout(timer);
        options.signal?.removeEventListener("abort", onAbort);
      };
      this.enqueue(waiter);
      options.onQueued?.(this.queued);
    });
  }

  private enqueue(waiter: Waiter): void {
    const line = this.waiting.get(waiter.key);
    if (line) line.push(waiter);
    else {
      this.waiting.set(waiter.key, [waiter]);
      this.turns.push(waiter.key);
    }
    this.queued += 1;
  }

  /** The next waiter in turn: the first of the key whose turn it is; that key goes to the back if it has more. */
  private next(): Waiter | undefined {
    const key = this.turns.shift();
    if (key === undefined) return undefined;
    const line = this.waiting.get(key)!;
    const waiter = line.shift()!;
    if (line.length > 0) this.turns.push(key);
    else this.waiting.delete(key);
    this.queued -= 1;
    return waiter;
  }

  private remove(waiter: Waiter): void {
    const line = this.waiting.get(waiter.key);
    const at = line?.indexOf(waiter) ?? -1;
    if (!line || at === -1) return;
    line.splice(at, 1);
    this.queued -= 1;
    if (line.length === 0) {
      this.waiting.delete(waiter.key);
      this.turns.splice(this.turns.indexOf(waiter.key), 1);
    }
  }

  private releaser(): ReleaseSlot {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.next();
      // The slot passes straight to the next waiter, so a newcomer can never jump the queue.
      if (next) next.grant(this.releaser());
      else this.running -= 1;
    };
  }
}
