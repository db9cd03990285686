// A file tool's review changes (what it is about to change) kept on its flight and recorded in the flight's next
// commit, its checkpoint's, preimages' or outcome's ahead, rather than a commit of their own (issue 34: every commit
// costs the event loop its WAL write, and an /e made three). For tools that await durability themselves
// (journal-runner.ts): their next journal write, or their durable() before any effect, writes them at the latest.
import { isStoreUnavailable } from "../../store/health.js";
import type { Store } from "../../store/index.js";
import type { IntentRow } from "../../store/journal.js";
import type { ChangeAuthor, NewFileChange } from "../../store/changes.js";
import type { Flight } from "./intent.js";

/** Keeps the changes for the flight's next commit, replacing (and dropping the staged chunks of) any kept before. */
export function deferChanges(store: Store, flight: Flight, changes: NewFileChange[]): void {
  if (flight.changes) store.changes.discardStaged(flight.changes);
  flight.changes = changes;
}

/**
 * Runs a write of the flight's with its kept changes recorded in the same transaction (at `at`). Should that fail,
 * the changes' staged chunks are dropped (no blob names them) and the changes forgotten, as a failed record did.
 */
export function withChanges<T>(store: Store, flight: Flight, at: number, write: () => T): T {
  const { changes } = flight;
  if (!changes) return write();
  try {
    const result = store.journal.transaction(() => {
      store.changes.record(authorOf(flight.row), changes, at);
      return write();
    });
    flight.changes = undefined;
    return result;
  } catch (error) {
    dropChanges(store, flight);
    throw error;
  }
}

/** Forgets the kept changes (the intent failed before writing them: only a success shows changes). */
export function dropChanges(store: Store, flight: Flight): void {
  if (!flight.changes) return;
  const { changes } = flight;
  flight.changes = undefined;
  try {
    store.changes.discardStaged(changes);
  } catch (error) {
    // Chunks no blob names are swept when the store opens next.
    if (!isStoreUnavailable(error)) throw error;
  }
}

/** Who a review record's rows are by: the intent, its session and project. */
export function authorOf(row: IntentRow): ChangeAuthor {
  return {
    intentId: row.id,
    sessionId: row.sessionId,
    generation: row.generation,
    projectId: row.projectId,
    projectRoot: row.projectRoot,
    callId: row.callId,
    tool: row.tool,
  };
}
