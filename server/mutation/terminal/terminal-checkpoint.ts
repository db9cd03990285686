// Checkpoints around a foreground /x command (issue 30 item 1): the project is scanned before and after the
// command (server/review/checkpoint/), and what changed is recorded in the session's change set under the
// command's own intent, so /c shows it and /n reverts it like a file tool's change; or a notice says why not.
import type { ToolContext } from "../../kernel/tool/definition.js";
import type { TakenCheckpoint } from "../../review/checkpoint/checkpoints.js";
import type { NewFileChange } from "../../store/changes.js";
import { runtimeOf } from "../journal/context.js";

/** Beside a command's result: what its change set could not record, when something could not. */
export interface CheckpointNote {
  checkpointNotice?: string;
}

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** Runs `run` (a foreground command) between two checkpoints and records the changes it made. */
export async function checkpointed<R extends object>(
  ctx: ToolContext,
  run: () => Promise<R>,
): Promise<R & CheckpointNote> {
  const runtime = runtimeOf(ctx);
  const { checkpoints, log } = runtime;
  const intent = ctx.intent;
  if (!checkpoints || !intent) return run();
  let taken: TakenCheckpoint | { notice: string };
  try {
    taken = await checkpoints.before(ctx.project, runtime.sandbox?.identityFor(ctx.project.root));
  } catch (error) {
    log.warn("could not checkpoint the project before a terminal command", { error: errorText(error) });
    taken = { notice: "terminal changes not recorded: the project could not be scanned before the command" };
  }
  const record = async (): Promise<string | undefined> => {
    let changes: NewFileChange[] = [];
    let notice: string | undefined;
    if ("notice" in taken) notice = taken.notice;
    else {
      try {
        ({ changes = [], notice } = await checkpoints.after(taken));
      } catch (error) {
        log.warn("could not checkpoint the project after a terminal command", { error: errorText(error) });
        notice = "terminal changes not recorded: the project could not be scanned after the command";
      }
    }
    try {
      // Large contents staged ahead, a sealed chunk a turn, so the record's transaction stores no megabytes.
      changes = await runtime.store.changes.stageAhead(changes);
    } catch (error) {
      log.warn("could not stage a terminal command's changes", { error: errorText(error) });
      changes = [];
      notice = "terminal changes not recorded: the state store refused them";
    }
    try {
      intent.recordChangesAfter(changes, notice);
    } catch (error) {
      runtime.store.changes.discardStaged(changes);
      log.warn("could not record a terminal command's changes", { error: errorText(error) });
      notice = "terminal changes not recorded: the state store refused them";
    }
    return notice;
  };
  let result: R;
  try {
    result = await run();
  } catch (error) {
    // The command may have run (its tree lost, its launcher refused late): its changes are recorded all the same.
    await record();
    throw error;
  }
  const notice = await record();
  return notice === undefined ? result : { ...result, checkpointNotice: notice };
}
