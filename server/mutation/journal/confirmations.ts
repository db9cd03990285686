// Confirmations of answered outcomes recorded ahead (Journal.recordAhead): each rides on the journal's next commit
// (the next admission or outcome), or commits by itself after CONFIRM_ALONE_AFTER_MS, off the answer's path. Until
// then (or if the process stops first) the record stays unconfirmed, and start-up recovery confirms it against the
// file, which holds the change: both fsyncs had finished before the answer.
import type { Logger } from "../../log.js";
import { isStoreUnavailable } from "../../store/health.js";
import type { Store } from "../../store/index.js";

/** When no other commit comes within this long, the pending confirmations commit by themselves. */
export const CONFIRM_ALONE_AFTER_MS = 100;

export class Confirmations {
  /** Answered outcomes still marked unconfirmed in the store, confirmed with the next commit. */
  private readonly pending = new Set<number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
  ) {}

  /** Confirms an answered outcome with the journal's next commit, or alone after CONFIRM_ALONE_AFTER_MS. */
  later(id: number): void {
    this.pending.add(id);
    this.schedule();
  }

  /** Runs a journal write with the pending confirmations in its transaction; they are done once it commits. */
  with<T>(write: () => T): T {
    if (this.pending.size === 0) return write();
    const ids = [...this.pending];
    const result = this.store.journal.transaction(() => {
      for (const id of ids) this.store.journal.confirm(id);
      return write();
    });
    for (const id of ids) this.pending.delete(id);
    return result;
  }

  /** Commits the pending confirmations by themselves; a store refusing them leaves them to the next commit. */
  commit(): void {
    if (this.pending.size === 0 || !this.store.db.open) return;
    try {
      this.with(() => undefined);
    } catch (error) {
      if (!isStoreUnavailable(error))
        this.log.error("could not confirm answered outcomes; start-up recovery confirms them", {
          error: error instanceof Error ? error.message : String(error),
        });
      else this.schedule();
    }
  }

  private schedule(): void {
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.commit();
    }, CONFIRM_ALONE_AFTER_MS).unref();
  }
}
