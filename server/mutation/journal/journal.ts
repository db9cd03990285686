// The intent journal: admits each mutation once per call id (SQLite unique index + in-process single
// flight), records its outcome durably with the project's state epoch, and presents records to agents. Its
// writes commit without an fsync; durable() makes them survive power loss, off the event loop, where it matters.
// Its parts: what an intent is (intent.ts), what is kept (retention.ts), getting a record onto stable storage
// (durable-record.ts), confirming outcomes recorded ahead (confirmations.ts).
import { ErrorCode, isToolError, toFailure, type ToolFailure } from "../../errors.js";
import type { JournalBehaviour, ToolResult } from "../../kernel/tool/definition.js";
import type { Logger } from "../../log.js";
import { isStoreUnavailable } from "../../store/health.js";
import type { Store } from "../../store/index.js";
import type { IntentRow, NewIntent, Preimage } from "../../store/journal.js";
import type { NewFileChange } from "../../store/changes.js";
import { Confirmations } from "./confirmations.js";
import { authorOf, deferChanges, dropChanges, withChanges } from "./deferred-changes.js";
import { durableOrLogged, recordDurably } from "./durable-record.js";
import type { Flight, IntentBody, IntentScope } from "./intent.js";
import {
  DEFAULT_REVIEW_BUDGET,
  PRUNE_EVERY_ADMISSIONS,
  SCAN_PRUNE_EVERY_MS,
  pruneJournal,
  pruneReview,
  type ReviewBudget,
} from "./retention.js";

/** How long shutdown waits for running intents to record their outcome; the rest are settled by recovery. */
export const SHUTDOWN_DRAIN_MS = 5000;

export class Journal {
  private readonly flights = new Map<string, Flight>();
  private admissions = 0;
  private scannedAt = Number.NEGATIVE_INFINITY;
  /** Answered outcomes recorded ahead, confirmed with the journal's next commit (confirmations.ts). */
  private readonly confirmations: Confirmations;
  /**
   * Per project, epoch bumps committed ahead of a side effect that has not happened yet (recordAhead): the epoch
   * this journal shows (epoch(), the epochAfter it records) leaves them out until the tool says its rename landed.
   */
  private readonly unlanded = new Map<string, number>();

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
    private readonly review: ReviewBudget = DEFAULT_REVIEW_BUDGET,
  ) {
    this.confirmations = new Confirmations(store, log);
  }

  private static key(scope: IntentScope, callId: string): string {
    return `${scope.sessionId}\u0000${scope.generation}\u0000${callId}`;
  }

  /** Intents executing (or waiting to) in this process. */
  get inFlight(): number {
    return this.flights.size;
  }

  inflight(scope: IntentScope, callId: string): Flight | undefined {
    return this.flights.get(Journal.key(scope, callId));
  }

  find(scope: IntentScope, callId: string): IntentRow | undefined {
    return this.store.journal.find(scope.sessionId, scope.generation, callId);
  }

  admit(intent: Omit<NewIntent, "createdAt">): { row: IntentRow; inserted: boolean } {
    const admitted = this.confirmations.with(() => this.store.journal.admit({ ...intent, createdAt: this.now() }));
    if (admitted.inserted && ++this.admissions % PRUNE_EVERY_ADMISSIONS === 0) {
      try {
        const now = this.now();
        const scan = now - this.scannedAt >= SCAN_PRUNE_EVERY_MS;
        pruneJournal(this.store, intent, now, scan);
        if (scan) {
          pruneReview(this.store, this.review, now);
          this.scannedAt = now;
        }
      } catch (error) {
        // The intent is admitted already and must launch; a refused prune only waits for the next one.
        if (!isStoreUnavailable(error)) throw error;
        this.admissions -= 1;
      }
    }
    return admitted;
  }

  /**
   * Registers the flight synchronously (so identical calls arriving while it runs join it), runs execute,
   * and records the outcome. The flight is forgotten only after the record is durable.
   */
  launch(
    row: IntentRow,
    behaviour: JournalBehaviour | undefined,
    execute: (flight: Flight) => Promise<IntentBody>,
  ): Flight {
    const key = Journal.key(row, row.callId);
    const flight: Flight = {
      row,
      promise: Promise.resolve(undefined as unknown as IntentBody),
      body: undefined,
      progress: undefined,
      running: false,
      startRecorded: false,
    };
    this.flights.set(key, flight);
    let answer!: (body: IntentBody) => void;
    flight.promise = new Promise<IntentBody>((resolve) => (answer = resolve));
    const settleWith = (body: IntentBody) => {
      flight.body = body;
      answer(body);
    };
    void (async () => {
      let body: IntentBody;
      try {
        body = await execute(flight);
      } catch (error) {
        if (!isToolError(error))
          this.log.error(`intent ${row.tool} failed outside its tool`, {
            error: error instanceof Error ? error.stack : String(error),
          });
        body = toFailure(error);
      }
      if (!body.ok && body.errorCode === ErrorCode.stateStoreUnavailable) {
        // The store refused a write that precedes every side effect, so nothing ran: answer at once, and withdraw
        // the record so that the same URL runs once the store takes writes again.
        dropChanges(this.store, flight);
        settleWith(body);
        await recordDurably(this.store, this.log, row, "withdraw", () =>
          this.store.journal.transaction(() => {
            this.takeBackAhead(flight);
            this.store.journal.withdraw(row.id);
          }),
        );
        return;
      }
      const lastSync = flight.lastSync?.catch((error: unknown) => toFailure(error));
      const failed = await lastSync;
      if (flight.ahead) {
        await this.settleAhead(flight, body, failed, behaviour).then(settleWith);
        return;
      }
      if (failed) body = failed;
      // Changes deferred and never written (the tool failed first) are not recorded: only a success shows them.
      if (flight.changes && !body.ok) dropChanges(this.store, flight);
      // Any other tool keeps the order: the tool's last fsync, then the outcome, then its fsync.
      // The record stays running if this gives up (the store closed); start-up recovery reports it, never re-runs it.
      await recordDurably(this.store, this.log, row, "record the outcome of", () =>
        withChanges(this.store, flight, this.now(), () => this.finish(row, body, behaviour)),
      );
      // Answered only once the outcome is on stable storage (as synchronous=FULL did at the commit itself).
      await durableOrLogged(this.store, this.log, row, "the outcome of", this.flights.size);
      settleWith(body);
    })().finally(() => {
      // Whatever happened, an epoch bump recorded ahead is shown from now on (a no-op once it was).
      flight.landed?.();
      this.flights.delete(key);
    });
    return flight;
  }

  /**
   * The answer of an intent whose success was recorded ahead of its side effect (recordAhead), once the tool and
   * its last fsync are done. That very success: the record stands, durable already (the fsync before the rename
   * covered it), and its confirmation follows off the answer's path (confirmations.ts). Anything else (a failure
   * before or at the rename, the directory's fsync failing, a different body): recorded over it, durably, first.
   * A tool that failed never renamed: its epoch bump is taken back with the failure, so the epoch moves as if
   * nothing had been recorded ahead.
   */
  private async settleAhead(
    flight: Flight,
    body: IntentBody,
    synced: ToolFailure | undefined,
    behaviour: JournalBehaviour | undefined,
  ): Promise<IntentBody> {
    const { row } = flight;
    if (body === flight.ahead && !synced) {
      if (!flight.aheadDurable) await durableOrLogged(this.store, this.log, row, "the outcome of", this.flights.size);
      this.confirmations.later(row.id);
      return body;
    }
    if (body.ok && body !== flight.ahead)
      this.log.error(
        `intent ${row.tool} ${row.callId} answered another success than it recorded ahead; recording the one it answered`,
      );
    const outcome = synced ?? body;
    await recordDurably(this.store, this.log, row, "record the outcome of", () =>
      this.finish(row, outcome, behaviour, body.ok ? undefined : flight),
    );
    await durableOrLogged(this.store, this.log, row, "the outcome of", this.flights.size);
    return outcome;
  }

  /**
   * Inside a failure's (or a withdrawal's) transaction, for an intent whose tool failed after recordAhead: takes
   * back the epoch bump unless another one followed it, and shows the epoch to readers again. Should that
   * transaction then fail, the bump stays: a change that did not happen, which only makes run=@changed run again.
   */
  private takeBackAhead(flight: Flight): void {
    if (flight.aheadEpoch !== undefined) this.store.journal.unbumpEpoch(flight.row.projectId, flight.aheadEpoch);
    flight.landed?.();
  }

  /**
   * Resolves once every journal write made so far is on stable storage: one fsync of the WAL in the thread pool,
   * shared with every other intent that wrote before it started (store/wal-sync.ts). Rejects with its error.
   */
  durable(): Promise<void> {
    return this.store.journalSync.durable();
  }

  /** durable() on the event loop, at once (store/wal-sync.ts durableSync); throws the fsync's error. */
  durableSync(): void {
    this.store.journalSync.durableSync();
  }

  /** Keeps what the intent is about to change for its next commit (deferred-changes.ts). */
  deferChanges(flight: Flight, changes: NewFileChange[]): void {
    deferChanges(this.store, flight, changes);
  }

  /** Commits the changes deferChanges kept, by themselves; nothing when there are none. */
  writeChanges(flight: Flight): void {
    if (flight.changes) withChanges(this.store, flight, this.now(), () => undefined);
  }

  markRunning(flight: Flight): void {
    this.store.journal.markRunning(flight.row.id, this.now());
    flight.running = true;
    flight.startRecorded = true;
  }

  /** Running as far as this process says (/j, joins); the record says so with the first checkpoint or preimages. */
  markRunningInMemory(flight: Flight): void {
    flight.running = true;
  }

  /** Saves the tool's checkpoint; the first one also records the start, in the same transaction. */
  saveCheckpoint(flight: Flight, data: unknown): void {
    withChanges(this.store, flight, this.now(), () => {
      if (flight.startRecorded) return this.store.journal.saveCheckpoint(flight.row.id, data);
      this.store.journal.startWithCheckpoint(flight.row.id, data, this.now());
    });
    flight.startRecorded = true;
  }

  /**
   * The file tools' one commit before their rename (IntentHandle.checkpointWithOutcome): the start, the checkpoint
   * and the success they will answer, marked unconfirmed, with the epoch bump. Readers of the epoch see that bump
   * only once the returned function runs (the rename landed): until then the project has not changed, and a
   * run=@changed call named by the new epoch could run against the old file and be replayed as current. A tool
   * that fails instead never calls it: its failure's record takes the bump back (settleAhead, takeBackAhead).
   */
  recordAhead(flight: Flight, data: unknown, body: ToolResult, behaviour: JournalBehaviour | undefined): () => void {
    const { row } = flight;
    const bump = bumpsEpoch(behaviour, body);
    this.confirmations.with(() =>
      withChanges(this.store, flight, this.now(), () =>
        this.store.journal.transaction(() => {
          if (!flight.startRecorded) this.store.journal.markRunning(row.id, this.now());
          this.store.journal.saveCheckpoint(row.id, data);
          const stored = this.finishInTransaction(row, body, bump, true);
          if (bump) flight.aheadEpoch = stored;
        }),
      ),
    );
    flight.startRecorded = true;
    flight.ahead = body;
    if (!bump) return (flight.landed = () => undefined);
    this.unlanded.set(row.projectId, (this.unlanded.get(row.projectId) ?? 0) + 1);
    let pending = true;
    return (flight.landed = () => {
      if (!pending) return;
      pending = false;
      // From here the bump is the change's (the rename happened) or already taken back (takeBackAhead).
      flight.aheadEpoch = undefined;
      const left = (this.unlanded.get(row.projectId) ?? 1) - 1;
      if (left > 0) this.unlanded.set(row.projectId, left);
      else this.unlanded.delete(row.projectId);
    });
  }

  /** Records what the intent is about to change, for review; applied only once the intent succeeds (finish). */
  recordChanges(flight: Flight, changes: NewFileChange[]): void {
    this.store.changes.record(authorOf(flight.row), changes, this.now());
  }

  /** For review, after the effects (a terminal checkpoint): the changes and what could not be recorded, in one commit. */
  recordChangesAfter(flight: Flight, changes: NewFileChange[], notice: string | undefined): void {
    const author = authorOf(flight.row);
    const at = this.now();
    this.store.journal.transaction(() => {
      if (changes.length > 0) this.store.changes.record(author, changes, at);
      if (notice !== undefined) this.store.changes.recordNotice(author, notice, at);
    });
  }

  /** Saves the tool's preimages; the first save also records the start, in the same transaction. */
  savePreimages(flight: Flight, preimages: Preimage[]): void {
    withChanges(this.store, flight, this.now(), () =>
      this.store.journal.savePreimages(flight.row.id, preimages, flight.startRecorded ? undefined : this.now()),
    );
    flight.startRecorded = true;
  }

  stateOf(flight: Flight): "pending" | "running" {
    return flight.running ? "running" : "pending";
  }

  /** Records the outcome, bumping the project's state epoch as the tool's behaviour asks, in one transaction. */
  finish(row: IntentRow, body: IntentBody, behaviour: JournalBehaviour | undefined, takeBack?: Flight): void {
    const bump = bumpsEpoch(behaviour, body);
    this.confirmations.with(() =>
      this.store.journal.transaction(() => {
        if (takeBack) this.takeBackAhead(takeBack);
        this.finishInTransaction(row, body, bump, false);
      }),
    );
  }

  /**
   * The outcome's UPDATE and the epoch bump, inside the caller's transaction; epochAfter is the epoch shown.
   * Returns the project's epoch in the store.
   */
  private finishInTransaction(row: IntentRow, body: IntentBody, bump: boolean, unconfirmed: boolean): number {
    const stored = bump ? this.store.journal.bumpEpoch(row.projectId) : this.store.journal.epoch(row.projectId);
    const epoch = stored - (this.unlanded.get(row.projectId) ?? 0);
    this.store.journal.finish(row.id, body.ok ? "succeeded" : "failed", body, epoch, this.now(), unconfirmed);
    // The review record shows a change only once its intent succeeded; a failure recorded over it hides it again.
    this.store.changes.settle(row.id, body.ok);
    return stored;
  }

  /** Waits up to waitMs for the flight; undefined when it is still running. */
  async settle(flight: Flight, waitMs: number): Promise<IntentBody | undefined> {
    if (flight.body) return flight.body;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), Math.max(0, waitMs));
    });
    try {
      return await Promise.race([flight.promise, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Waits (bounded) for intents executing in this process to record their outcome, before the store closes. */
  /**
   * Settles once every intent of the session executing in this process has recorded its outcome: deleting or
   * discarding a worktree session waits for a git_commit under way, which would otherwise write into a folder being
   * removed or make its branch again after `branch -D`. Call it after the session's capabilities changed, so that
   * nothing new is admitted meanwhile.
   */
  async settleSession(sessionId: string): Promise<void> {
    const running = [...this.flights.values()].filter((flight) => flight.row.sessionId === sessionId);
    await Promise.all(running.map((flight) => flight.promise));
  }

  async drain(timeoutMs: number): Promise<void> {
    const pending = [...this.flights.values()].map((f) => f.promise);
    if (pending.length > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.all(pending), new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
      clearTimeout(timer);
    }
    // Answered outcomes are confirmed before the store closes (recovery would confirm them against the files).
    this.confirmations.commit();
  }

  /** The project's state epoch, without bumps recorded ahead of a change that has not landed yet (recordAhead). */
  epoch(projectId: string): number {
    return this.store.journal.epoch(projectId) - (this.unlanded.get(projectId) ?? 0);
  }
}

/** Whether finishing with this body bumps the project's state epoch, as the tool's behaviour asks (default: a success). */
function bumpsEpoch(behaviour: JournalBehaviour | undefined, body: IntentBody): boolean {
  const policy = behaviour?.bumpsEpoch ?? "success";
  return typeof policy === "function" ? policy(body) : policy === "always" || (policy === "success" && body.ok);
}
