// In-memory state of one session generation: response snapshots, and typed slots owned by the modules that use
// them (read coverage, edit streaks). Durable state (journal, staging) lives in SQLite; this is what a restart loses.
import { ResponseSnapshots } from "../../url-grammar/range-replay.js";

export class SessionState {
  readonly snapshots = new ResponseSnapshots();
}

/** A typed piece of per-session state, declared by the module that owns it: `const x = sessionSlot(() => ...)`. */
export interface SessionSlot<T extends object> {
  /** This session generation's value, created on first use. */
  of(state: SessionState): T;
}

export function sessionSlot<T extends object>(create: () => T): SessionSlot<T> {
  // Keyed by the state object: a generation that rotation or forget() drops takes its values with it.
  const values = new WeakMap<SessionState, T>();
  return {
    of(state) {
      let value = values.get(state);
      if (value === undefined) {
        value = create();
        values.set(state, value);
      }
      return value;
    },
  };
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
