// What the journal runner adds to a mutation tool's context: the shared mutation runtime (journal, staging,
// write queue, terminal state) and, while a recorded intent executes, its handle. Declared by augmenting
// ToolContext so the kernel stays ignorant of the mutation layer.
import { ErrorCode, ToolError } from "../../errors.js";
import type { Logger } from "../../log.js";
import type { Store } from "../../store/index.js";
import type { Sandbox } from "../../sandbox/launcher.js";
import type { Preimage } from "../../store/journal.js";
import type { Journal } from "./journal.js";
import type { Staging } from "../staging/staging.js";
import type { TerminalState } from "../terminal/terminal-state.js";
import type { TestHooks } from "./test-hooks.js";
import type { ProjectWriteQueue } from "./write-queue.js";

export interface MutationRuntime {
  store: Store;
  journal: Journal;
  staging: Staging;
  queue: ProjectWriteQueue;
  hooks: TestHooks;
  log: Logger;
  /** How terminal commands are confined (server/sandbox/launcher.ts); absent in process-level tests. */
  sandbox?: Sandbox;
  /** This bridge's terminal gate, live process trees and (container mode) container runner. */
  terminal: TerminalState;
}

/** The intent a tool is executing as. Only present for recorded (journaled) tools. */
export interface IntentHandle {
  callId: string;
  /** Durably saves JSON that this tool's journal.recover() receives if the process dies before the intent finishes. */
  checkpoint(data: unknown): void;
  /**
   * Durably records, in one transaction, what every path looked like before the tool touches it. Call before the
   * first write: start-up recovery restores them byte-exactly through InterruptedIntent.rollback().
   */
  recordPreimages(preimages: Preimage[]): void;
  /** The current request URL with a fresh, deterministic run= nonce: a `retry` URL after a recovery action. */
  retryUrl(): string | undefined;
  /** A progress snapshot that /j shows while the intent is running (memory only). */
  progress(snapshot: Record<string, unknown>): void;
}

declare module "../../kernel/tool/definition.js" {
  interface ToolContext {
    /** Set by the journal runner for every mutation-capability tool. */
    mutation?: MutationRuntime;
    /** Set by the journal runner while a recorded intent executes. */
    intent?: IntentHandle;
  }
}

export function runtimeOf(ctx: { mutation?: MutationRuntime | undefined }): MutationRuntime {
  if (!ctx.mutation) throw new ToolError(ErrorCode.internalError, "This tool runs only through the mutation journal runner.", { retryable: false });
  return ctx.mutation;
}

export function intentOf(ctx: { intent?: IntentHandle | undefined }): IntentHandle {
  if (!ctx.intent) throw new ToolError(ErrorCode.internalError, "This tool runs only as a journaled intent.", { retryable: false });
  return ctx.intent;
}
