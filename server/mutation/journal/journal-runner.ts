// The mutation half of the tool kernel (server/tool/run-tool.ts): given validated arguments, it strips the
// journal controls, resolves staged content, derives the call id, and answers each call from the journal: a new
// intent runs the kernel's execute step once, an identical in-flight call joins it, and a finished one is
// replayed from its record without executing again. Permission and validation are the kernel's, done before.
// Replays: replay.ts; the store refusing a write before any effect: store-refusals.ts; staged content:
// staging/staged-fields.ts.
import { ErrorCode, isToolError, ToolError, toFailure } from "../../errors.js";
import type { ExecuteStep, RunOutcome } from "../../kernel/tool/runner.js";
import type { AnyToolDefinition, ToolContext } from "../../kernel/tool/definition.js";
import type { IntentRow } from "../../store/journal.js";
import { computeCallId, hashArguments } from "./call-id.js";
import type { IntentHandle, MutationRuntime } from "./context.js";
import { MAX_WAIT_MS, RUN_WHEN_CHANGED, splitControls } from "./controls.js";
import { loopIsSaturated } from "./inline-sync.js";
import type { Dedupe, Flight, IntentBody, IntentScope } from "./intent.js";
import { presentFinished, presentUnfinished } from "./present.js";
import { freshRunUrl, replay, selfPoll } from "./replay.js";
import { durableBeforeEffects, refusedBeforeEffects, refuseWhenStoreFails, syncRefused } from "./store-refusals.js";
import { resolveStagedFields } from "../staging/staged-fields.js";

/** Runs one validated mutation-capability call through the journal; may reject with a ToolError. */
export type JournalRunner = (
  tool: AnyToolDefinition,
  args: Record<string, unknown>,
  ctx: ToolContext,
) => Promise<RunOutcome>;

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
        return replay(journal, recorded, tool, ctx, controls.wait);
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
        return replay(journal, admitted.row, tool, ctx, controls.wait);
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
      // A tool that awaits durability itself writes its checkpoint, preimages or durable() before any effect: the
      // changes ride on that commit. Any other tool may have no journal write between them and its effects.
      recordChanges: (changes) =>
        tool.journal?.awaitsDurableItself
          ? journal.deferChanges(flight, changes)
          : refusedBeforeEffects(runtime, () => journal.recordChanges(flight, changes)),
      recordChangesAfter: (changes, notice) => journal.recordChangesAfter(flight, changes, notice),
      durable: () => {
        try {
          refusedBeforeEffects(runtime, () => journal.writeChanges(flight));
        } catch (error) {
          return Promise.reject(error as Error);
        }
        // A sync that starts after the outcome was recorded ahead covers it: its answer then waits for no other.
        const coversAhead = flight.ahead !== undefined;
        const synced = durableBeforeEffects(runtime);
        return coversAhead ? synced.then(() => void (flight.aheadDurable = true)) : synced;
      },
      durableNow: () => {
        refusedBeforeEffects(runtime, () => journal.writeChanges(flight));
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
