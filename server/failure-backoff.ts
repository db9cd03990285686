// Per-source backoff for failed attempts (wrong operator tokens, unknown capability tokens): the answer to a
// failure is held longer the more a source failed recently, and never more than a bounded number at once.
// It only ever delays failures: the caller checks a credential first, so a right one is never slowed or refused.

export interface FailureBackoffOptions {
  /** Failures per source inside the window that are answered at once. */
  freeFailures: number;
  /** Delay of the first held failure; each further one doubles it, up to maxDelayMs. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** How long a failure counts toward its source's total. */
  windowMs: number;
  /** Failures held at once across all sources; beyond it a failure is answered at once (saturated). */
  maxHeld: number;
  /** Sources remembered; the least recently failing ones are forgotten first. */
  maxSources: number;
  now?: () => number;
}

export interface FailureVerdict {
  /** The source's failures inside the window, this one included. */
  failures: number;
  /** How long this failure's answer was held (0 when free or saturated). */
  heldMs: number;
  /** The hold was due but every slot was taken, so it was answered at once. */
  saturated: boolean;
}

export interface FailureBackoff {
  /** Records one failure of source and resolves when its answer may go out. */
  fail(source: string): Promise<FailureVerdict>;
  /** Records one failure of source without holding anything; returns its failures inside the window. */
  record(source: string): number;
  /** Takes a hold slot for delayMs; undefined (answer at once) when every slot is taken. */
  hold(delayMs: number): Promise<void> | undefined;
  /** The hold the next failure of source would get, ignoring saturation. */
  delayFor(failures: number): number;
  /** Failures being held right now. */
  held(): number;
}

/** Bound on timestamps kept per source: enough to reach maxDelayMs and stay there. */
const MAX_TIMESTAMPS_PER_SOURCE = 256;

export function createFailureBackoff(options: FailureBackoffOptions): FailureBackoff {
  const now = options.now ?? Date.now;
  const failures = new Map<string, number[]>();
  let heldNow = 0;

  function delayFor(count: number): number {
    const over = count - options.freeFailures;
    if (over <= 0) return 0;
    return Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** Math.min(over - 1, 30));
  }

  function record(source: string): number {
    const t = now();
    const cutoff = t - options.windowMs;
    const list = (failures.get(source) ?? []).filter((at) => at > cutoff);
    list.push(t);
    if (list.length > MAX_TIMESTAMPS_PER_SOURCE) list.splice(0, list.length - MAX_TIMESTAMPS_PER_SOURCE);
    // Re-inserted so the Map's order is least recently failing first.
    failures.delete(source);
    failures.set(source, list);
    while (failures.size > options.maxSources) failures.delete(failures.keys().next().value!);
    return list.length;
  }

  function hold(delay: number): Promise<void> | undefined {
    if (heldNow >= options.maxHeld) return undefined;
    heldNow += 1;
    return new Promise<void>((resolve) => setTimeout(resolve, delay).unref()).finally(() => {
      heldNow -= 1;
    });
  }

  return {
    delayFor,
    record,
    hold,
    held: () => heldNow,
    async fail(source) {
      const count = record(source);
      const delay = delayFor(count);
      if (delay === 0) return { failures: count, heldMs: 0, saturated: false };
      const holding = hold(delay);
      if (!holding) return { failures: count, heldMs: 0, saturated: true };
      await holding;
      return { failures: count, heldMs: delay, saturated: false };
    },
  };
}
