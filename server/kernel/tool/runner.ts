// A tool's execute step: errors become structured failures and unexpected ones are logged for the operator
// without reaching the agent. run-tool.ts calls it for read tools, and hands it to the journal runner for mutations.
import { isToolError, toFailure, type ToolFailure } from "../../errors.js";
import type { Logger } from "../../log.js";
import type { AnyToolDefinition, ToolContext, ToolResult } from "./definition.js";

export interface RunOutcome {
  body: ToolResult | ToolFailure;
  /** Journal call id, for mutation tools. */
  callId?: string;
  /** How the journal answered: new, replayed (existing record), joined (in-flight execution). */
  dedupe?: "new" | "replayed" | "joined";
  /** The call was refused before the tool was invoked (permission, the transport's decoding, validation). */
  refused?: true;
}

/** A tool that never waits (read) answers synchronously, and the gateway then answers without a microtask. */
export type MaybePromise<T> = T | Promise<T>;

/** The execute step the kernel hands the journal runner: validated arguments in, a body out, never a throw. */
export type ExecuteStep = (
  tool: AnyToolDefinition,
  args: Record<string, unknown>,
  ctx: ToolContext,
) => MaybePromise<ToolResult | ToolFailure>;

export function isPromise<T>(value: MaybePromise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | null)?.then === "function";
}

export function executeSafely(
  tool: AnyToolDefinition,
  args: Record<string, unknown>,
  ctx: ToolContext,
  log: Logger,
): MaybePromise<ToolResult | ToolFailure> {
  const fail = (error: unknown): ToolFailure => {
    if (!isToolError(error)) {
      log.error(`tool ${tool.id} failed unexpectedly`, { error: error instanceof Error ? error.stack : String(error) });
    }
    return toFailure(error);
  };
  try {
    const result = tool.execute(args, ctx);
    return isPromise(result) ? result.catch(fail) : result;
  } catch (error) {
    return fail(error);
  }
}
