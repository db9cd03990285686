// The contract between a mutation tool and the intent journal that runs it: how the journal treats the tool
// (JournalBehaviour), what a tool may do while it runs as an intent (IntentHandle, ctx.intent), and what
// start-up recovery hands a tool about an intent the previous process left unfinished (InterruptedIntent).
// The kernel defines it; server/mutation/journal/ implements it.
import type { ToolFailure } from "../../errors.js";
import type { Preimage } from "../../store/journal.js";
import type { NewFileChange } from "../../store/changes.js";
import type { ToolContext, ToolResult } from "./definition.js";

/**
 * Opt-in journal behaviour of a mutation tool. Every field is optional; the defaults suit a file mutation.
 * Every mutation tool also spreads `journalControls` (wait, run, call) from server/mutation into its schema.
 */
export interface JournalBehaviour {
  /** false: a mutation-base helper that is not an intent (stage, blob status, result); run directly, never recorded. */
  record?: boolean;
  /** Staged-content fields the runner turns into text (blob + count -> into) before hashing and executing. */
  stagedContent?: Array<{
    blob: string;
    count: string;
    into: string;
    /** Default: always required. */ required?: (args: Record<string, unknown>) => boolean;
  }>;
  /** Run through the per-project write queue. Default: true when permission is "write". */
  serialize?: boolean;
  /**
   * The one existing file this call rewrites, as a canonical host path, when that is all it touches: intents of
   * different lanes in one project run side by side in the write queue (write-queue.ts), so an edit does not wait
   * for another file's fsyncs. Undefined (or no lane function): the intent runs alone in its project. The tool
   * refuses with path_changed when the file it then holds is not this one (ctx.intent.lane).
   */
  lane?(args: Record<string, unknown>, ctx: ToolContext): string | undefined;
  /** When finishing the intent bumps the project's state epoch. Default "success". A function decides per outcome. */
  bumpsEpoch?: "success" | "always" | "never" | ((body: ToolResult | ToolFailure) => boolean);
  /**
   * true: the tool itself awaits ctx.intent.durable() right before its first side effect (after its checkpoint or
   * preimages), so the runner does not wait for the journal before execute; the file tools overlap that wait with
   * their temp file's fsync. Default: the runner makes the intent durable before execute starts.
   */
  awaitsDurableItself?: boolean;
  /** A replay of a finished intent gets an exact `repeat` URL (fresh run=) once the project's state epoch has moved. */
  repeatOnStateChange?: boolean;
  /** wait= when the call gives none, for calls whose work takes longer than the journal's default (bg=1's start-up window). */
  defaultWaitMs?(args: Record<string, unknown>): number | undefined;
  /**
   * Waits for a scarce slot before the intent starts (the terminal gate); the intent stays `pending` meanwhile.
   * Returns the release to call once execute has finished, or undefined when the call needs no slot. A ToolError
   * thrown here becomes the intent's recorded failure and execute never runs.
   */
  admit?(args: Record<string, unknown>, ctx: ToolContext): Promise<(() => void) | undefined>;
  /**
   * Start-up recovery of an intent found pending or running: returns the body to record. Never re-runs the tool.
   * Default: a failed record with errorCode `interrupted`.
   */
  recover?(intent: InterruptedIntent): Promise<ToolResult | ToolFailure>;
  /**
   * Start-up recovery of a success recorded ahead of the tool's side effect (IntentHandle checkpointWithOutcome)
   * and never confirmed: the process stopped before it answered, maybe before the effect. Checks the tool's effect
   * is on disk; a ToolFailure replaces the recorded success, undefined confirms it. Required with checkpointWithOutcome.
   */
  confirm?(intent: InterruptedIntent): Promise<ToolFailure | undefined>;
}

/** What recovery knows about an intent the previous process did not finish. */
export interface InterruptedIntent {
  callId: string;
  tool: string;
  /** pending: admitted, never started; running: started, outcome unknown. */
  phase: "pending" | "running";
  projectRoot: string;
  /** Whatever the tool saved with ctx.intent.checkpoint() before its side effects, or undefined. */
  checkpoint: unknown;
  /** Restores every preimage the tool recorded with ctx.intent.recordPreimages(), byte-exactly. */
  rollback(): Promise<{ restored: string[]; removed: string[] }>;
}

/** The intent a tool is executing as (ctx.intent). Only present for recorded (journaled) tools. */
export interface IntentHandle {
  callId: string;
  /** The write-queue lane this intent runs in (JournalBehaviour.lane), or undefined when it runs alone. */
  lane: string | undefined;
  /** Saves JSON that this tool's journal.recover() receives if the process dies before the intent finishes (see durable()). */
  checkpoint(data: unknown): void;
  /**
   * checkpoint() for a tool whose one remaining side effect is a rename, with the success it will answer once the
   * rename lands: both, and the intent's start, in one transaction before any side effect, the outcome marked
   * unconfirmed, so the one durable() before the rename covers the outcome too. The tool must return this very
   * body; a failure it returns or throws instead replaces the record, durably, before the answer. Returns the
   * function the tool calls as soon as the rename has happened: the project's state epoch, bumped in the store by
   * this commit, shows as moved to the journal's readers (run=@changed, replays) only from then, and a failure
   * takes the bump back. Requires journal.confirm, which start-up recovery asks whether the effect is on disk.
   */
  checkpointWithOutcome(data: unknown, body: ToolResult): () => void;
  /**
   * Records, in one transaction, what every path looked like before the tool touches it. Call before the first
   * write (and durable() before it lands): start-up recovery restores them byte-exactly through InterruptedIntent.rollback().
   */
  recordPreimages(preimages: Preimage[]): void;
  /**
   * Records, for review and revert (server/review/), every file this intent is about to change, before and after.
   * Call before the first write; the changes show in the session's change set only once the intent succeeds.
   */
  recordChanges(changes: NewFileChange[]): void;
  /**
   * For a tool that learns its changes only after making them (a terminal command's checkpoint): records them and
   * `notice`, what could not be recorded, in one transaction. A store that refuses throws; the effects stand.
   */
  recordChangesAfter(changes: NewFileChange[], notice?: string): void;
  /**
   * Resolves once the intent's record and everything saved with checkpoint()/recordPreimages() so far survive
   * power loss (they survive the process dying as soon as they return). A tool with `awaitsDurableItself` awaits
   * it before its first side effect; rejects with state_store_unavailable, nothing having run.
   */
  durable(): Promise<void>;
  /**
   * durable() done at once on the event loop: for a tool that other mutations of its project are queued behind,
   * where each thread-pool trip would hold all of them up for an event-loop turn. Throws state_store_unavailable.
   */
  durableNow(): void;
  /**
   * The tool's effect is in place and only its last fsync (the directory's, after a rename) is still running, so
   * the tool can return (and release the project's write queue) at once: the journal answers once it is done, and
   * a failure `synced` resolves with replaces the outcome, durably. With an outcome recorded ahead
   * (checkpointWithOutcome) that is the answer's last wait; otherwise the outcome is recorded after it.
   */
  lastSyncAfterRecord(synced: Promise<ToolFailure | undefined>): void;
  /** The current request URL with a fresh, deterministic run= nonce: a `retry` URL after a recovery action. */
  retryUrl(): string | undefined;
  /** A progress snapshot that /j shows while the intent is running (memory only). */
  progress(snapshot: Record<string, unknown>): void;
}
