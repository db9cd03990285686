// How the journal presents an intent's record to the agent: a finished body with its journal identity, a
// tombstone once the result's retention dropped, or where to poll while it is still pending or running.
import { ErrorCode } from "../../errors.js";
import type { ExactUrls } from "../../kernel/tool/definition.js";
import type { IntentRow } from "../../store/journal.js";
import { pollWaitOf } from "./controls.js";
import type { TombstoneAnswer, UnfinishedAnswer } from "./envelope.js";
import type { Dedupe, IntentBody, ShownDedupe } from "./intent.js";

/** A finished intent as the agent sees it: the recorded body plus its journal identity. */
export function presentFinished(callId: string, body: IntentBody, dedupe: Dedupe | undefined): IntentBody {
  return { ...body, callId, state: body.ok ? "succeeded" : "failed", ...(dedupe ? { dedupe } : {}) } as IntentBody;
}

/** A finished intent's record whose result retention has dropped. */
export type TombstoneRow = IntentRow & { state: "succeeded" | "failed"; result: undefined };

/** True for a record whose intent finished but whose result retention has since dropped. */
export function isTombstone(row: IntentRow): row is TombstoneRow {
  return row.result === undefined && (row.state === "succeeded" || row.state === "failed");
}

/**
 * A tombstone's answer: the call already executed (when, with which outcome) and is not run again. Not ok, since
 * the agent does not get the result it asked for; a `retry` URL runs the call again on purpose.
 */
export function presentTombstone(
  row: TombstoneRow,
  retry: string | undefined,
  dedupe: ShownDedupe | undefined,
): TombstoneAnswer {
  const executedAt = new Date(row.finishedAt ?? row.createdAt).toISOString();
  return {
    ok: false,
    errorCode: ErrorCode.intentResultExpired,
    errorDetail: {
      tool: row.tool,
      outcome: row.state,
      executedAt,
      ...(row.errorCode ? { outcomeErrorCode: row.errorCode } : {}),
    },
    repairHint: `This call already executed at ${executedAt} (${row.state}); its result is no longer kept, so it was not run again. Re-read what you need, or fetch retry to run it again on purpose.`,
    retryable: false,
    agentAction: "stop",
    callId: row.callId,
    state: row.state,
    ...(retry ? { retry } : {}),
    ...(dedupe ? { dedupe } : {}),
  };
}

/** An intent still pending or running: where to poll for its result. */
export function presentUnfinished(
  callId: string,
  state: "pending" | "running",
  urls: ExactUrls,
  dedupe: ShownDedupe | undefined,
  progress: Record<string, unknown> | undefined,
  /** Where to poll instead of /j (replay.ts: a session without the /j helper polls the call's own URL). */
  poll: string | undefined,
  /** The wait= the call asked for: the poll URL keeps it (controls.ts pollWaitOf). */
  wait: number | undefined,
): UnfinishedAnswer {
  return {
    ok: true,
    state,
    callId,
    ...(dedupe ? { dedupe } : {}),
    poll: poll ?? pollUrl(urls, callId, wait),
    agentAction: "poll",
    hint: "Accepted and still running. Fetch poll for the result; fetching this URL again never runs it twice.",
    ...(progress ? { progress } : {}),
  };
}

/** The /j URL of an intent, waiting as long as the call that started it asked (bounded, controls.ts pollWaitOf). */
export function pollUrl(urls: ExactUrls, callId: string, wait?: number): string {
  return urls.to("m", "j", [
    ["call", callId],
    ["wait", pollWaitOf(wait)],
  ]);
}
