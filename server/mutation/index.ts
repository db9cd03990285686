// The mutation surface: tools, the journal runner and start-up recovery.
//
// API for a mutation tool (e.g. terminal /x):
//   defineTool({ capability: "mutation", permission: "write" | "terminal",
//                schema: z.object({ ...yourFields, ...journalControls }),   // wait, run, call
//                journal: { stagedContent: [{ blob: "blob", count: "count", into: "command" }],
//                           serialize?, bumpsEpoch?: "success" | "always" | "never" | (body) => boolean,
//                           repeatOnStateChange?: true, awaitsDurableItself?: true, admit?(args, ctx), recover?(intent),
//                           confirm?(intent) },                              // with checkpointWithOutcome (write, edit)
//                execute(args, ctx) })                                       // args: controls stripped, blob resolved
//   ctx.intent  (IntentHandle): callId, checkpoint(json), checkpointWithOutcome(json, body), recordPreimages([...]), durable(), durableNow(),
//                               lastSyncAfterRecord(synced), retryUrl(), progress(snapshot)
//   ctx.mutation (MutationRuntime): journal, staging, queue, store, log, hooks, terminal (gate, live trees)
//   resolveStagedContent(ctx, blob, count?)  -> text, or staged_* ToolError with statusUrl
//   interruptedFailure(row, phase)           -> the default `interrupted` record, for a recover() that adds detail
// The runner answers replays from the journal (dedupe new | joined | replayed), adds `poll` while running,
// `repeat` on replays after the project's state epoch moved (repeatOnStateChange), `retry` after interruptions.
import type { AnyToolDefinition } from "../kernel/tool/definition.js";
import { applyPatchTool } from "./files/apply-patch/index.js";
import { blobStatusTool } from "./staging/blob-status.js";
import { editTool } from "./files/edit.js";
import { resultTool } from "./journal/poll.js";
import { stageTool } from "./staging/stage.js";
import { terminalTool } from "./terminal/terminal.js";
import { terminalInputTool } from "./terminal/pty/terminal-input.js";
import { terminalViewTool } from "./terminal/pty/terminal-view.js";
import { writeTool } from "./files/write.js";
import { changesTool } from "./review/changes.js";
import { revertTool } from "./review/revert.js";
import { createCommitTool } from "./vcs/commit.js";
import { createGitRunner } from "../kernel/vcs/git-process.js";
import type { Sandbox } from "../sandbox/launcher.js";

export { journalControls, DEFAULT_WAIT_MS, MAX_WAIT_MS, RUN_NONCE_PATTERN } from "./journal/controls.js";
export { computeCallId, canonicalJson, deriveRunNonce } from "./journal/call-id.js";
export { runtimeOf, intentOf, type IntentHandle, type MutationRuntime } from "./journal/context.js";
export { createJournalRunner } from "./journal/journal-runner.js";
export { freshRunUrl } from "./journal/replay.js";
export { SHUTDOWN_DRAIN_MS } from "./journal/journal.js";
export type { IntentBody } from "./journal/intent.js";
export { pollUrl } from "./journal/present.js";
export { createMutationRuntime, type MutationRuntimeOptions } from "./runtime.js";
export { recoverInterruptedIntents, interruptedFailure, type RecoveredIntent } from "./journal/recovery.js";
export { resolveStagedContent, blobStatusUrl } from "./staging/staging.js";
export { readTestHooks } from "./journal/test-hooks.js";

export const mutationTools: AnyToolDefinition[] = [
  writeTool,
  editTool,
  applyPatchTool,
  terminalTool,
  terminalInputTool,
  terminalViewTool,
  stageTool,
  blobStatusTool,
  resultTool,
  changesTool,
  revertTool,
];

/** Every mutation tool, git_commit (/h) with git confined by `sandbox` as /v's git is (unconfined without one). */
export function createMutationTools(sandbox: Sandbox | undefined): AnyToolDefinition[] {
  return [...mutationTools, createCommitTool(createGitRunner(sandbox))];
}
