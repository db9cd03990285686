// The mutation half of the tool kernel (server/tool/run-tool.ts): given validated arguments, it strips the
// journal controls, resolves staged content, derives the call id, and answers each call from the journal: a new
// intent runs the kernel's execute step once, an identical in-flight call joins it, and a finished one is
// replayed from its record without executing again. Permission and validation are the kernel's, done before.
import { setTimeout as sleep } from "node:timers/promises";
import { ErrorCode, isToolError, ToolError, toFailure } from "../../errors.js";
import type { ExecuteStep, RunOutcome } from "../../kernel/tool/runner.js";
import type { AnyToolDefinition, ToolContext } from "../../kernel/tool/definition.js";
import { mutationEnabled } from "../../kernel/tool/permissions.js";
import { isStoreUnavailable, sqliteCode } from "../../store/health.js";
import { MAX_READ_PATHS } from "../../kernel/limits.js";
import type { IntentRow } from "../../store/journal.js";
import { computeCallId, deriveRunNonce, hashArguments } from "./call-id.js";
import type { IntentHandle, MutationRuntime } from "./context.js";
import { MAX_WAIT_MS, pollWaitOf, RUN_WHEN_CHANGED, splitControls } from "./controls.js";
import { loopIsSaturated } from "./inline-sync.js";
import type { Dedupe, Flight, IntentBody, IntentScope } from "./intent.js";
import { isTombstone, presentFinished, presentTombstone, presentUnfinished } from "./present.js";
import { resolveStagedContent } from "../staging/staging.js";

/** Runs one validated mutation-capability call through the journal; may reject with a ToolError. */
export type JournalRunner = (
  tool: AnyToolDefinition,
  args: Record<string, unknown>,
  ctx: ToolContext,
) => Promise<RunOutcome>;

/** Error codes recovery records; a replay of such a record offers a `retry` URL with a fresh run=. */
const INTERRUPTED_CODES = new Set<string>([ErrorCode.interrupted, ErrorCode.interruptedRolledBack]);

export function createJournalRunner(runtime: MutationRuntime, executeStep: ExecuteStep): JournalRunner {
  const { journal, log } = runtime;

  return async (tool, args, baseCtx) => {
    const ctx: ToolContext = { ...baseCtx, mutation: runtime };
    if (tool.journal?.record === false) return { body: await executeStep(tool, args, ctx) };

    const { controls, rest } = splitControls(args);
    // A tool may wait longer by default for some calls (bg=1 waits out its start-up window); an explicit wait= wins.
    if (args.wait === undefined)
      controls.wait = Math.min(MAX_WAIT_MS, tool.journal?.defaultWaitMs?.(rest) ?? controls.wait);
    if (controls.run !== undefined && controls.call !== undefined) {
      throw new ToolError(
        ErrorCode.conflictingParameters,
        "Give run= (repeat on purpose) or call= (explicit id), not both.",
        {
          detail: { parameters: ["run", "call"] },
        },
      );
    }
    const scope: IntentScope = { sessionId: ctx.session.id, generation: ctx.session.generation };

    // Each attempt, from here to launch(), is synchronous, so identical concurrent GETs cannot both admit. Staged
    // content is resolved inside it too: taking a blob writes its last use, which a store refusing writes fails.
    return refuseWhenStoreFails(runtime, () => {
      const semantic = resolveStagedFields(tool, rest, ctx);
      const run = controls.run === RUN_WHEN_CHANGED ? runWhenChanged(tool, semantic, scope, ctx) : controls.run;
      const callId = computeCallId({ tool: tool.id, args: semantic, run, call: controls.call });
      const argsHash = hashArguments(tool.id, semantic);
      const flying = journal.inflight(scope, callId);
      if (flying) {
        assertSameCall(flying.row, tool, argsHash);
        return respond(flying, "joined", controls.wait, ctx, tool);
      }
      const recorded = journal.find(scope, callId);
      if (recorded) {
        assertSameCall(recorded, tool, argsHash);
        return replay(recorded, tool, ctx, controls.wait);
      }
      const admitted = journal.admit({
        sessionId: scope.sessionId,
        generation: scope.generation,
        projectId: ctx.project.id,
        projectRoot: ctx.project.root,
        callId,
        tool: tool.id,
        argsHash,
      });
      if (!admitted.inserted) {
        assertSameCall(admitted.row, tool, argsHash);
        return replay(admitted.row, tool, ctx, controls.wait);
      }
      const flight = journal.launch(admitted.row, tool.journal, (f) => execute(f, tool, semantic, ctx));
      return respond(flight, "new", controls.wait, ctx, tool);
    });
  };

  /**
   * run=@changed names the intent by the project's state epoch: the same URL in the same epoch is the same intent
   * (a hidden retry joins or replays it), and any change to the project since makes it a new one. A run that
   * itself moved the epoch (/x bumps it after it ran) still counts as current while nothing else changed.
   */
  function runWhenChanged(
    tool: AnyToolDefinition,
    args: Record<string, unknown>,
    scope: IntentScope,
    ctx: ToolContext,
  ): string {
    const epoch = journal.epoch(ctx.project.id);
    const nonceOf = (e: number) => `${RUN_WHEN_CHANGED}:${e}`;
    if (epoch > 0) {
      const previous = journal.find(scope, computeCallId({ tool: tool.id, args, run: nonceOf(epoch - 1) }));
      if (previous && previous.epochAfter === epoch) return nonceOf(epoch - 1);
    }
    return nonceOf(epoch);
  }

  async function execute(
    flight: Flight,
    tool: AnyToolDefinition,
    args: Record<string, unknown>,
    ctx: ToolContext,
  ): Promise<IntentBody> {
    const lane = laneOf(tool, args, ctx);
    const run = async () => {
      const intentCtx: ToolContext = { ...ctx, intent: intentHandle(flight, tool, ctx, lane) };
      let release: (() => void) | undefined;
      try {
        release = await tool.journal?.admit?.(args, intentCtx);
      } catch (error) {
        if (!isToolError(error))
          log.error(`admission of intent ${tool.id} failed`, {
            error: error instanceof Error ? error.stack : String(error),
          });
        return toFailure(error);
      }
      try {
        // A tool that awaits durability itself records its start with its checkpoint or preimages (one commit, not
        // two): before those it has no side effect, so a crash leaves it pending and recovery says nothing ran.
        if (tool.journal?.awaitsDurableItself) journal.markRunningInMemory(flight);
        else refusedBeforeEffects(runtime, () => journal.markRunning(flight));
        // Admission and start are on stable storage before anything runs, unless the tool waits for it itself at
        // its first side effect (the file tools, which overlap that fsync with their own).
        if (!tool.journal?.awaitsDurableItself) {
          if (loopIsSaturated(journal.inFlight)) intentCtx.intent!.durableNow();
          else await durableBeforeEffects(runtime);
        }
        return await executeStep(tool, args, intentCtx);
      } finally {
        release?.();
      }
    };
    const serialize = tool.journal?.serialize ?? tool.permission === "write";
    return serialize ? runtime.queue.run(ctx.project.root, run, lane) : run();
  }

  /** The tool's lane for these arguments; a lane function that fails leaves the intent to run alone. */
  function laneOf(tool: AnyToolDefinition, args: Record<string, unknown>, ctx: ToolContext): string | undefined {
    try {
      return tool.journal?.lane?.(args, ctx);
    } catch {
      return undefined;
    }
  }

  function intentHandle(
    flight: Flight,
    tool: AnyToolDefinition,
    ctx: ToolContext,
    lane: string | undefined,
  ): IntentHandle {
    const { row } = flight;
    return {
      callId: row.callId,
      lane,
      // All three come before the tool's side effects (journal-contract.ts), so a store refusing them means nothing ran.
      checkpoint: (data) => refusedBeforeEffects(runtime, () => journal.saveCheckpoint(flight, data)),
      checkpointWithOutcome: (data, body) =>
        refusedBeforeEffects(runtime, () => journal.recordAhead(flight, data, body, tool.journal)),
      recordPreimages: (preimages) => refusedBeforeEffects(runtime, () => journal.savePreimages(flight, preimages)),
      recordChanges: (changes) => refusedBeforeEffects(runtime, () => journal.recordChanges(flight, changes)),
      recordChangesAfter: (changes, notice) => journal.recordChangesAfter(flight, changes, notice),
      durable: () => {
        // A sync that starts after the outcome was recorded ahead covers it: its answer then waits for no other.
        const coversAhead = flight.ahead !== undefined;
        const synced = durableBeforeEffects(runtime);
        return coversAhead ? synced.then(() => void (flight.aheadDurable = true)) : synced;
      },
      durableNow: () => {
        try {
          runtime.journal.durableSync();
        } catch (error) {
          throw syncRefused(runtime, error);
        }
        if (flight.ahead) flight.aheadDurable = true;
      },
      lastSyncAfterRecord: (synced) => {
        flight.lastSync = synced;
      },
      retryUrl: () => freshRunUrl(ctx, row.callId, "retry"),
      progress: (snapshot) => {
        flight.progress = snapshot;
      },
    };
  }

  async function respond(
    flight: Flight,
    dedupe: Dedupe,
    wait: number,
    ctx: ToolContext,
    tool: AnyToolDefinition,
  ): Promise<RunOutcome> {
    const body = await journal.settle(flight, wait);
    const { callId } = flight.row;
    // A new intent's response does not say "new": only replays and joins are worth the agent's attention.
    const shown = dedupe === "new" ? undefined : dedupe;
    if (body === undefined) {
      // "Accepted and still running" acknowledges the intent: its admission is on stable storage first.
      await durableBeforeEffects(runtime).catch(() => undefined);
      return {
        body: presentUnfinished(
          callId,
          journal.stateOf(flight),
          ctx.urls,
          shown,
          flight.progress,
          selfPoll(tool, ctx, wait),
          wait,
        ),
        callId,
        dedupe,
      };
    }
    return { body: presentFinished(callId, body, shown), callId, dedupe };
  }

  function replay(row: IntentRow, tool: AnyToolDefinition, ctx: ToolContext, wait: number): RunOutcome {
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
}

/**
 * How long a mutation may wait, off the event loop, for a lock another process holds on the state file before it
 * is refused. Each try waits at most JOURNAL_BUSY_TIMEOUT_MS on the loop (store/database.ts); between tries the
 * loop serves everything else.
 */
export const ADMISSION_LOCK_WAIT_MS = 1000;
const ADMISSION_FIRST_RETRY_MS = 20;

/**
 * An intent that cannot be recorded must not run: without its record a hidden retry would run it again. So a
 * store that refuses the admission write answers a retryable failure before anything executes. A busy lock is
 * tried again with backoff for up to ADMISSION_LOCK_WAIT_MS; each try repeats the whole synchronous admission
 * (in-flight check, lookup, insert, launch), so a call that arrived meanwhile is joined, never admitted twice.
 */
async function refuseWhenStoreFails(
  runtime: MutationRuntime,
  admit: () => Promise<RunOutcome> | RunOutcome,
): Promise<RunOutcome> {
  const deadline = performance.now() + ADMISSION_LOCK_WAIT_MS;
  for (let delay = ADMISSION_FIRST_RETRY_MS; ; delay *= 2) {
    let outcome: Promise<RunOutcome> | RunOutcome;
    try {
      outcome = admit();
    } catch (error) {
      if (!isStoreUnavailable(error)) throw error;
      const left = deadline - performance.now();
      if (sqliteCode(error) === "SQLITE_BUSY" && left > 0) {
        await sleep(Math.min(delay, left));
        continue;
      }
      runtime.store.journalHealth.refused(error);
      throw storeUnavailable(error);
    }
    runtime.store.journalHealth.succeeded();
    return outcome;
  }
}

/** Runs a journal write that precedes the tool's side effects; a store refusing it becomes state_store_unavailable. */
function refusedBeforeEffects<T>(runtime: MutationRuntime, write: () => T): T {
  try {
    return write();
  } catch (error) {
    if (!isStoreUnavailable(error)) throw error;
    runtime.store.journalHealth.refused(error);
    throw storeUnavailable(error);
  }
}

/**
 * Waits for the journal's writes so far to reach stable storage (journal.ts durable()). It comes before the tool's
 * side effects, so an fsync that fails means nothing ran: state_store_unavailable, and the intent is withdrawn.
 */
async function durableBeforeEffects(runtime: MutationRuntime): Promise<void> {
  try {
    await runtime.journal.durable();
  } catch (error) {
    throw syncRefused(runtime, error);
  }
}

function syncRefused(runtime: MutationRuntime, error: unknown): ToolError {
  runtime.log.error("could not fsync the journal before a mutation ran; refusing it", {
    error: error instanceof Error ? error.message : String(error),
  });
  return new ToolError(
    ErrorCode.stateStoreUnavailable,
    "The bridge cannot make its journal durable right now (its state disk failed a sync), so nothing was run. Retry the same URL in a few seconds; the operator sees the cause in the log.",
    {
      detail: { store: (error as NodeJS.ErrnoException).code ?? "unknown" },
      retryable: true,
      agentAction: "wait_and_retry",
    },
  );
}

/** The one answer for "the journal could not be written, so nothing ran"; journal.ts withdraws such an intent. */
function storeUnavailable(error: unknown): ToolError {
  return new ToolError(
    ErrorCode.stateStoreUnavailable,
    "The bridge cannot write its journal right now (its state disk is full or locked), so nothing was run. Retry the same URL in a few seconds; the operator sees the cause in /api/health and the log.",
    {
      detail: { store: sqliteCode(error) ?? "unknown" },
      retryable: true,
      agentAction: "wait_and_retry",
    },
  );
}

function assertSameCall(row: IntentRow, tool: AnyToolDefinition, argsHash: string): void {
  if (row.tool === tool.id && row.argsHash === argsHash) return;
  throw new ToolError(
    ErrorCode.callIdConflict,
    `call=${row.callId} already names a different ${row.tool} call in this session. Use a new call id, or omit call= for an automatic one.`,
    {
      detail: { callId: row.callId, recordedTool: row.tool },
      retryable: false,
    },
  );
}

/** Replaces each declared blob=/count= pair by the staged text in its `into` field; the content is then required. */
function resolveStagedFields(
  tool: AnyToolDefinition,
  args: Record<string, unknown>,
  ctx: ToolContext,
): Record<string, unknown> {
  const fields = tool.journal?.stagedContent;
  if (!fields) return args;
  const out = { ...args };
  for (const { blob, count, into, required } of fields) {
    const blobId = out[blob];
    const declared = out[count];
    delete out[blob];
    delete out[count];
    if (typeof blobId !== "string") {
      if (declared !== undefined) {
        throw new ToolError(
          ErrorCode.missingParameter,
          `${count}= describes a staged blob; give ${blob}=<id> with it, or drop ${count}=.`,
          {
            detail: { parameter: blob },
            repair: ctx.urls.repair({ drop: [count] }),
          },
        );
      }
      if (out[into] === undefined && (required?.(out) ?? true)) {
        const spellings = [into, ...(tool.url.rawField === into ? ["raw="] : []), `${blob}=<id>`];
        throw new ToolError(
          ErrorCode.missingParameter,
          `Missing ${into}: give it as ${spellings.join(" or ")}.${tool.example ? ` Example: ${tool.example}` : ""}`,
          {
            detail: { parameter: into },
          },
        );
      }
      continue;
    }
    if (out[into] !== undefined) {
      throw new ToolError(ErrorCode.conflictingParameters, `${into} was given both inline and as ${blob}=; keep one.`, {
        detail: { parameters: [into, blob] },
      });
    }
    out[into] = resolveStagedContent(ctx, blobId, typeof declared === "number" ? declared : undefined);
  }
  return out;
}

/** The current request with a fresh run= nonce derived from (callId, purpose); undefined off the URL transport. */
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

export function freshRunUrl(ctx: ToolContext, callId: string, purpose: string): string | undefined {
  return ctx.urls.repair({ drop: ["run", "call"], add: [["run", deriveRunNonce(callId, purpose)]] });
}

/**
 * A session with neither write nor terminal has no /j helper; its calls of an openToReadOnly tool poll their own
 * URL (with /j's wait), which joins the same intent (or replays its record) and never runs it twice.
 */
function selfPoll(tool: AnyToolDefinition, ctx: ToolContext, wait: number | undefined): string | undefined {
  if (!tool.openToReadOnly || mutationEnabled(ctx.project.permissions)) return undefined;
  return ctx.urls.repair({ drop: ["wait"], add: [["wait", String(pollWaitOf(wait))]] });
}
