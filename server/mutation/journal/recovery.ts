// Start-up recovery, run before the data plane listens: every intent the previous process left pending or
// running is settled without being re-run. Tools may restore what they touched (apply_patch rolls back from
// its preimages); everything else is recorded as `interrupted`. Then old journal and staging rows are pruned, and
// review chunks no record names are dropped.
import { ErrorCode, ToolError, type ToolFailure } from "../../errors.js";
import type { AnyToolDefinition, InterruptedIntent, ToolResult } from "../../kernel/tool/definition.js";
import type { IntentRow } from "../../store/journal.js";
import type { MutationRuntime } from "./context.js";
import { JOURNAL_RETENTION_MS } from "./retention.js";
import { rollbackPreimages } from "./preimages.js";

export interface RecoveredIntent {
  callId: string;
  tool: string;
  phase: "pending" | "running";
  errorCode: string | undefined;
}

export async function recoverInterruptedIntents(
  runtime: MutationRuntime,
  tools: AnyToolDefinition[],
): Promise<RecoveredIntent[]> {
  const { store, journal, log } = runtime;
  const recovered: RecoveredIntent[] = [];
  const unfinished = store.journal.unfinished();
  for (const row of unfinished) {
    const tool = tools.find((t) => t.id === row.tool);
    const phase = row.state === "running" ? "running" : "pending";
    const intent: InterruptedIntent = {
      callId: row.callId,
      tool: row.tool,
      phase,
      projectRoot: row.projectRoot,
      checkpoint: row.checkpoint,
      rollback: () => rollbackPreimages(row.projectRoot, store.journal.preimages(row.id)),
    };
    let body: ToolResult | ToolFailure;
    try {
      body = tool?.journal?.recover ? await tool.journal.recover(intent) : interruptedFailure(row, phase);
    } catch (error) {
      log.error(`recovery of intent ${row.tool} failed; recording it as interrupted`, {
        error: error instanceof Error ? error.stack : String(error),
      });
      body = interruptedFailure(row, phase, { recoveryFailed: true });
    }
    journal.finish(row, body, tool?.journal);
    const errorCode = body.ok ? undefined : String(body.errorCode);
    log.warn(
      `intent ${row.tool} was ${phase} when the previous process stopped; recorded as ${errorCode ?? "succeeded"}`,
    );
    recovered.push({ callId: row.callId, tool: row.tool, phase, errorCode });
  }
  const unconfirmed = store.journal.unconfirmed();
  for (const row of unconfirmed) recovered.push(...(await confirmOutcome(runtime, tools, row)));
  const pruned =
    store.journal.pruneLeftGenerations() + store.journal.prune({ finishedBefore: Date.now() - JOURNAL_RETENTION_MS });
  runtime.staging.sweep();
  // Review contents an interrupted intent staged but never recorded (store/changes.ts stageAhead): nothing names them.
  const swept = store.changes.sweepStaged();
  if (swept > 0) log.info("dropped review content chunks an interrupted intent left unrecorded", { chunks: swept });
  // Every settled record is on stable storage before either plane listens. A start that settled, pruned and swept
  // nothing (the usual restart) has no record to make durable, and skips the fsync the planes would wait for.
  if (unfinished.length + unconfirmed.length + pruned + swept > 0) await journal.durable();
  return recovered;
}

/**
 * A success recorded ahead of its tool's side effect (journal.ts recordAhead) and never confirmed: the process
 * stopped before it answered, perhaps before the rename. The tool's journal.confirm checks its change is on disk;
 * if not (no rename yet, or one a power loss undid), its failure replaces the success, so no replay answers
 * success for it.
 */
async function confirmOutcome(
  runtime: MutationRuntime,
  tools: AnyToolDefinition[],
  row: IntentRow,
): Promise<RecoveredIntent[]> {
  const { store, journal, log } = runtime;
  const tool = tools.find((t) => t.id === row.tool);
  const intent: InterruptedIntent = {
    callId: row.callId,
    tool: row.tool,
    phase: "running",
    projectRoot: row.projectRoot,
    checkpoint: row.checkpoint,
    rollback: () => rollbackPreimages(row.projectRoot, store.journal.preimages(row.id)),
  };
  let failure: ToolFailure | undefined;
  try {
    failure = row.state === "succeeded" ? await tool?.journal?.confirm?.(intent) : undefined;
  } catch (error) {
    log.error(`confirming the outcome of intent ${row.tool} failed; recording it as interrupted`, {
      error: error instanceof Error ? error.stack : String(error),
    });
    failure = interruptedFailure(row, "running", { applied: "unknown", recoveryFailed: true });
  }
  if (!failure) {
    store.journal.confirm(row.id);
    return [];
  }
  journal.finish(row, failure, tool?.journal);
  log.warn(
    `intent ${row.tool} recorded a success the disk does not hold (the previous process stopped before answering); recorded as ${failure.errorCode}`,
  );
  return [{ callId: row.callId, tool: row.tool, phase: "running", errorCode: String(failure.errorCode) }];
}

/** The default record for an intent the previous process did not finish: it is never re-run by itself. */
export function interruptedFailure(
  row: Pick<IntentRow, "tool">,
  phase: "pending" | "running",
  detail: Record<string, unknown> = {},
): ToolFailure {
  const hint =
    phase === "pending"
      ? `The bridge restarted before this ${row.tool} call started; nothing was done. Fetch retry to run it now.`
      : `The bridge restarted while this ${row.tool} call was running; it was not re-run and its effects may be partial. Check the project state, then fetch retry if it should run again.`;
  return new ToolError(ErrorCode.interrupted, hint, {
    detail: { phase, started: phase === "running", ...detail },
    retryable: true,
    agentAction: "correct_request",
  }).toFailure();
}
