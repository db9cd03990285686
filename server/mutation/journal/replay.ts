// How the journal runner answers a call it does not run: a finished intent replayed from its record (with a
// fresh-run URL where it was interrupted, and a note when the project changed since), an unfinished one that is
// not executing here, and the URL a session without /j polls instead.
import { ErrorCode } from "../../errors.js";
import type { RunOutcome } from "../../kernel/tool/runner.js";
import type { AnyToolDefinition, ToolContext } from "../../kernel/tool/definition.js";
import { mutationEnabled } from "../../kernel/tool/permissions.js";
import { MAX_READ_PATHS } from "../../kernel/limits.js";
import type { IntentRow } from "../../store/journal.js";
import { deriveRunNonce } from "./call-id.js";
import type { MutationRuntime } from "./context.js";
import { pollWaitOf } from "./controls.js";
import type { IntentBody } from "./intent.js";
import { isTombstone, presentFinished, presentTombstone, presentUnfinished } from "./present.js";

/** Error codes recovery records; a replay of such a record offers a `retry` URL with a fresh run=. */
const INTERRUPTED_CODES = new Set<string>([ErrorCode.interrupted, ErrorCode.interruptedRolledBack]);

/** The answer to a call whose intent the journal already recorded; it never runs the intent again. */
export function replay(
  journal: MutationRuntime["journal"],
  row: IntentRow,
  tool: AnyToolDefinition,
  ctx: ToolContext,
  wait: number,
): RunOutcome {
  if (isTombstone(row)) {
    return {
      body: presentTombstone(row, freshRunUrl(ctx, row.callId, "retry-expired"), "replayed"),
      callId: row.callId,
      dedupe: "replayed",
    };
  }
  if (row.result === undefined) {
    // Unfinished and not executing here: recovery has not reached it yet. Never run it again.
    const state = row.state === "running" ? "running" : "pending";
    return {
      body: presentUnfinished(row.callId, state, ctx.urls, "replayed", undefined, selfPoll(tool, ctx, wait), wait),
      callId: row.callId,
      dedupe: "replayed",
    };
  }
  const body = presentFinished(row.callId, row.result as IntentBody, "replayed") as Record<string, unknown>;
  const code = typeof body.errorCode === "string" ? body.errorCode : undefined;
  if (code && INTERRUPTED_CODES.has(code) && body.retry === undefined) {
    const retry = freshRunUrl(ctx, row.callId, "retry-interrupted");
    if (retry) body.retry = retry;
  }
  if (row.epochAfter !== null) {
    const epoch = journal.epoch(row.projectId);
    if (epoch > row.epochAfter && tool.journal?.repeatOnStateChange) {
      const repeat = freshRunUrl(ctx, row.callId, `repeat@${epoch}`);
      if (repeat) {
        body.repeat = repeat;
        body.repeatHint =
          "The project changed since this ran; this is the recorded result. Fetch repeat to run it again now. For a test command, run=@changed instead of run= reruns it only when the project changed since its last run.";
      }
    } else if (epoch > row.epochAfter && tool.permission === "write") {
      body.changedSince = changedSinceOf(ctx, body);
    }
  }
  return { body: body as IntentBody, callId: row.callId, dedupe: "replayed" };
}

/** Paths a replayed file mutation names (path, or an apply_patch's files), for changedSince's read URL. */
function pathsNamedIn(body: Record<string, unknown>): string[] {
  const detail = body.errorDetail as { path?: unknown } | undefined;
  const single = typeof body.path === "string" ? body.path : typeof detail?.path === "string" ? detail.path : undefined;
  if (single) return [single];
  const files = Array.isArray(body.files) ? (body.files as Array<{ path?: unknown }>) : [];
  return files
    .map((f) => f.path)
    .filter((p): p is string => typeof p === "string")
    .slice(0, MAX_READ_PATHS);
}

/**
 * A replay of a file mutation after the project's state epoch moved (some /w, /e, /a or /x finished since, in any
 * session): the recorded answer is not the current state. Says so, with a read of the files it named.
 */
function changedSinceOf(ctx: ToolContext, body: Record<string, unknown>): { hint: string; read?: string } {
  const paths = pathsNamedIn(body);
  const hint =
    "The project changed since this ran (a later /w, /e, /a or /x, in any session); this is the recorded answer, not the current state.";
  if (paths.length === 0) return { hint };
  return {
    hint: `${hint} Fetch read to see the file${paths.length === 1 ? "" : "s"} now.`,
    read: ctx.urls.to(
      "r",
      "r",
      paths.map((p): [string, string] => ["path", p]),
    ),
  };
}

/** The current request with a fresh run= nonce derived from (callId, purpose); undefined off the URL transport. */
export function freshRunUrl(ctx: ToolContext, callId: string, purpose: string): string | undefined {
  return ctx.urls.repair({ drop: ["run", "call"], add: [["run", deriveRunNonce(callId, purpose)]] });
}

/**
 * A session with neither write nor terminal has no /j helper; its calls of an openToReadOnly tool poll their own
 * URL (with /j's wait), which joins the same intent (or replays its record) and never runs it twice.
 */
export function selfPoll(tool: AnyToolDefinition, ctx: ToolContext, wait: number | undefined): string | undefined {
  if (!tool.openToReadOnly || mutationEnabled(ctx.project.permissions)) return undefined;
  return ctx.urls.repair({ drop: ["wait"], add: [["wait", String(pollWaitOf(wait))]] });
}
