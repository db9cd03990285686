// In-memory state of one session generation (response snapshots, read coverage, edit streaks...).
// Durable state (journal, staging) lives in SQLite; this is what may be lost on restart.
import { ResponseSnapshots } from "../transport/range-replay.js";

export class SessionState {
  readonly snapshots = new ResponseSnapshots();
  private readonly slots = new Map<string, unknown>();

  /** A named piece of per-session state, created on first use. */
  slot<T>(key: string, create: () => T): T {
    if (!this.slots.has(key)) this.slots.set(key, create());
    return this.slots.get(key) as T;
  }
}

/** Session states keyed by session id and generation; a rotation simply stops using the old key. */
export class SessionStates {
  private readonly states = new Map<string, SessionState>();

  get(sessionId: string, generation: number): SessionState {
    const key = `${sessionId}:${generation}`;
    let state = this.states.get(key);
    if (!state) {
      for (const existing of this.states.keys()) if (existing.startsWith(`${sessionId}:`)) this.states.delete(existing);
      state = new SessionState();
      this.states.set(key, state);
    }
    return state;
  }

  forget(sessionId: string): void {
    for (const key of this.states.keys()) if (key.startsWith(`${sessionId}:`)) this.states.delete(key);
  }
}
