// In-memory state of one session generation (response snapshots, read coverage, edit streaks...).
// Durable state (journal, staging) lives in SQLite; this is what may be lost on restart.
import { ResponseSnapshots } from "../../url-grammar/range-replay.js";

export class SessionState {
  readonly snapshots = new ResponseSnapshots();
  private readonly slots = new Map<string, unknown>();

  /** A named piece of per-session state, created on first use. */
  slot<T>(key: string, create: () => T): T {
    if (!this.slots.has(key)) this.slots.set(key, create());
    return this.slots.get(key) as T;
  }
}

/** Session states keyed by session id and generation; a rotation simply stops using the old one. */
export class SessionStates {
  /** At most one generation per session is live, so the newest one seen replaces any older one. */
  private readonly states = new Map<string, { generation: number; state: SessionState }>();

  get(sessionId: string, generation: number): SessionState {
    const entry = this.states.get(sessionId);
    if (entry && entry.generation === generation) return entry.state;
    const state = new SessionState();
    this.states.set(sessionId, { generation, state });
    return state;
  }

  forget(sessionId: string): void {
    this.states.delete(sessionId);
  }
}
