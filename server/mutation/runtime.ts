// Builds the one mutation runtime a bridge shares between its journal runner, its tools and start-up recovery.
import type { Logger } from "../log.js";
import type { Sandbox } from "../sandbox/launcher.js";
import { Checkpoints, type CheckpointSettings } from "../review/checkpoint/checkpoints.js";
import type { Store } from "../store/index.js";
import type { MutationRuntime } from "./journal/context.js";
import { Journal } from "./journal/journal.js";
import type { ReviewBudget } from "./journal/retention.js";
import { Staging } from "./staging/staging.js";
import { NO_TEST_HOOKS, type TestHooks } from "./journal/test-hooks.js";
import { ProjectWriteQueue } from "./journal/write-queue.js";
import { createTerminalState, type TerminalState } from "./terminal/terminal-state.js";

export interface MutationRuntimeOptions {
  store: Store;
  log: Logger;
  /** Test-only hooks (readTestHooks()); inert by default. */
  hooks?: TestHooks;
  now?: () => number;
  sandbox?: Sandbox;
  /** The bridge's terminal state; a fresh one (native mode, default limits) when absent. */
  terminal?: TerminalState;
  /** How long and how much of the review record (file changes' contents) is kept; defaults in journal/retention.ts. */
  review?: ReviewBudget;
  /** Checkpoints around terminal commands (config.checkpoints); none when absent or not enabled. */
  checkpoints?: CheckpointSettings;
}

export function createMutationRuntime(options: MutationRuntimeOptions): MutationRuntime {
  const now = options.now ?? Date.now;
  return {
    store: options.store,
    journal: new Journal(options.store, options.log, now, options.review),
    staging: new Staging(options.store, now),
    queue: new ProjectWriteQueue(),
    hooks: options.hooks ?? NO_TEST_HOOKS,
    log: options.log,
    terminal: options.terminal ?? createTerminalState(),
    ...(options.sandbox ? { sandbox: options.sandbox } : {}),
    ...(options.checkpoints?.enabled ? { checkpoints: new Checkpoints(options.checkpoints) } : {}),
  };
}
