// The shared mutation runtime (journal, staging, write queue, terminal state) that the journal runner puts in a
// mutation tool's context. It is the one field the mutation layer adds to ToolContext by augmentation, so the
// kernel's types never name the layer above them; the journal contract itself (JournalBehaviour, IntentHandle,
// InterruptedIntent) is the kernel's, in server/kernel/tool/journal-contract.ts.
import { ErrorCode, ToolError } from "../../errors.js";
import type { Logger } from "../../log.js";
import type { Store } from "../../store/index.js";
import type { Sandbox } from "../../sandbox/launcher.js";
import type { Checkpoints } from "../../review/checkpoint/checkpoints.js";
import type { IntentHandle } from "../../kernel/tool/journal-contract.js";
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
  /** Checkpoints around foreground terminal commands (URLBRIDGE_CHECKPOINTS); absent when off. */
  checkpoints?: Checkpoints;
}

declare module "../../kernel/tool/definition.js" {
  interface ToolContext {
    /** Set by the journal runner for every mutation-capability tool. */
    mutation?: MutationRuntime;
  }
}

export type { IntentHandle };

export function runtimeOf(ctx: { mutation?: MutationRuntime | undefined }): MutationRuntime {
  if (!ctx.mutation)
    throw new ToolError(ErrorCode.internalError, "This tool runs only through the mutation journal runner.", {
      retryable: false,
    });
  return ctx.mutation;
}

export function intentOf(ctx: { intent?: IntentHandle | undefined }): IntentHandle {
  if (!ctx.intent)
    throw new ToolError(ErrorCode.internalError, "This tool runs only as a journaled intent.", { retryable: false });
  return ctx.intent;
}
