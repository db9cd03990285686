// The one tool runner every transport calls (the URL gateway, tests, next MCP and plugins): it checks the project
// permission once, validates candidate input with the tool's zod schema into our structured errors, executes
// (read tools directly, synchronously when they can; mutations through the journal runner) and converts errors.
import { ErrorCode, isToolError, ToolError, toFailure, type ToolFailure } from "../errors.js";
import type { Logger } from "../log.js";
import type { MutationRuntime } from "../mutation/journal/context.js";
import { createJournalRunner, type JournalRunner } from "../mutation/journal/journal-runner.js";
import type { AnyToolDefinition, ToolContext } from "../kernel/tool/definition.js";
import { assertToolEnabled } from "../kernel/tool/permissions.js";
import { safeParseCompiled } from "../kernel/tool/compiled-schema.js";
import { executeSafely, isPromise, type MaybePromise, type RunOutcome } from "../kernel/tool/runner.js";
import { inputError, type ValidateInputOptions } from "../kernel/tool/validate-input.js";

export type { MaybePromise, RunOutcome } from "../kernel/tool/runner.js";

/**
 * Input as a caller that is not a URL sends it: JSON values (numbers as numbers, booleans as booleans), content in
 * the tool's rawField, journal controls (wait, run, call) and staged-content fields (blob, count) included.
 */
export type CandidateInput = Record<string, unknown>;

export interface ToolKernel {
  /** Runs one call; never rejects: every failure comes back as a `{ok:false, errorCode, ...}` body. */
  run(tool: AnyToolDefinition, input: CandidateInput, ctx: ToolContext): MaybePromise<RunOutcome>;
  /**
   * run() for a transport with refusals of its own that answer after the permission check and before validation,
   * as the URL route's wrong-base and binding errors always have: `decode` runs once the tool is known to be
   * enabled, and a ToolError it throws is the call's answer.
   */
  runDecoded(tool: AnyToolDefinition, decode: () => CandidateInput, ctx: ToolContext): MaybePromise<RunOutcome>;
}

export interface ToolKernelOptions {
  log: Logger;
  /** The journal, staging and write queue mutation tools run with; without it they answer tool_not_enabled. */
  mutation?: MutationRuntime;
}

/** What runTool needs besides the call: where unexpected failures are logged, and the mutation half. */
export interface KernelDeps {
  log: Logger;
  journal?: JournalRunner;
}

export function createToolKernel(options: ToolKernelOptions): ToolKernel {
  const { log } = options;
  const journal = options.mutation
    ? createJournalRunner(options.mutation, (tool, args, ctx) => executeSafely(tool, args, ctx, log))
    : undefined;
  const deps: KernelDeps = journal ? { log, journal } : { log };
  return {
    run: (tool, input, ctx) => runTool(tool, input, ctx, deps),
    runDecoded: (tool, decode, ctx) => runTool(tool, decode, ctx, deps),
  };
}

/**
 * The order of refusals is part of the wire contract: permission, then the transport's own (decode), then
 * validation, then the journal's (controls, staged content, call id). A read tool whose execute is synchronous
 * answers synchronously: /r is the hot path.
 */
export function runTool(
  tool: AnyToolDefinition,
  input: CandidateInput | (() => CandidateInput),
  ctx: ToolContext,
  deps: KernelDeps,
): MaybePromise<RunOutcome> {
  let args: Record<string, unknown>;
  let journal: JournalRunner | undefined;
  try {
    assertToolEnabled(tool, ctx.project.permissions);
    const candidate = typeof input === "function" ? input() : input;
    const parsed = safeParseCompiled(tool.schema, candidate);
    if (!parsed.success) throw inputError(tool.schema, parsed.error, candidate, inputWording(tool, ctx));
    args = parsed.data;
    if (tool.capability === "mutation") {
      journal = deps.journal;
      if (!journal)
        throw new ToolError(ErrorCode.toolNotEnabled, `${tool.id} is not available in this build.`, {
          retryable: false,
        });
    }
  } catch (error) {
    return { body: failureOf(tool, error, deps.log), refused: true };
  }
  if (!journal) {
    const body = executeSafely(tool, args, ctx, deps.log);
    return isPromise(body) ? body.then((settled) => ({ body: settled })) : { body };
  }
  return journal(tool, args, ctx).catch((error: unknown) => ({ body: failureOf(tool, error, deps.log) }));
}

function inputWording(tool: AnyToolDefinition, ctx: ToolContext): ValidateInputOptions {
  return {
    ...(tool.url.rawField ? { rawField: tool.url.rawField } : {}),
    example: tool.example,
    repair: (edit) => ctx.urls.repair(edit),
  };
}

function failureOf(tool: AnyToolDefinition, error: unknown, log: Logger): ToolFailure {
  if (!isToolError(error))
    log.error(`tool call ${tool.id} failed unexpectedly`, {
      error: error instanceof Error ? error.stack : String(error),
    });
  return toFailure(error);
}
