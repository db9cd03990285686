// An intent as the journal holds it: the body it records (a tool's result or failure), how an answer relates to an
// earlier call with the same id, and a flight, the in-process state of an intent executing in this process.
import type { ToolFailure } from "../../errors.js";
import type { ToolResult } from "../../kernel/tool/definition.js";
import type { NewFileChange } from "../../store/changes.js";
import type { IntentRow } from "../../store/journal.js";

export type IntentBody = ToolResult | ToolFailure;
export type Dedupe = "new" | "replayed" | "joined";
/** The dedupe an answer shows: a new intent's answer carries none. */
export type ShownDedupe = Exclude<Dedupe, "new">;

export interface IntentScope {
  sessionId: string;
  generation: number;
}

/** An intent executing in this process. */
export interface Flight {
  row: IntentRow;
  /** Resolves with the recorded body; never rejects. */
  promise: Promise<IntentBody>;
  body: IntentBody | undefined;
  progress: Record<string, unknown> | undefined;
  /** False while waiting in the write queue. */
  running: boolean;
  /** True once the record says running (markRunning, or the first checkpoint or preimages of the tool). */
  startRecorded: boolean;
  /** The tool's last fsync, still running when execute returned (IntentHandle.lastSyncAfterRecord). */
  lastSync?: Promise<ToolFailure | undefined>;
  /** The success recorded ahead of the tool's side effect, unconfirmed (recordAhead). */
  ahead?: ToolResult;
  /** True once a journal fsync that started after the ahead record has finished: the answer needs no other. */
  aheadDurable?: boolean;
  /** Shows the ahead record's epoch bump to readers (recordAhead); idempotent. */
  landed?: () => void;
  /** The project's epoch in the store right after the ahead record bumped it, until that bump is settled. */
  aheadEpoch?: number;
  /** What the intent is about to change (Journal.deferChanges), recorded in the flight's next commit. */
  changes?: NewFileChange[];
}
