// The one place a tool call is executed: errors become structured failures and unexpected ones are logged
// for the operator without reaching the agent. Mutation tools go through the journal runner instead.
import { isToolError, toFailure, type ToolFailure } from "../errors.js";
import type { Logger } from "../log.js";
import type { AnyToolDefinition, ToolContext, ToolResult } from "./tool.js";

export interface RunOutcome {
  body: ToolResult | ToolFailure;
  /** Journal call id, for mutation tools. */
  callId?: string;
  /** How the journal answered: new, replayed (existing record), joined (in-flight execution). */
  dedupe?: "new" | "replayed" | "joined";
}

export type ToolRunner = (tool: AnyToolDefinition, args: Record<string, unknown>, ctx: ToolContext) => Promise<RunOutcome>;

export async function executeSafely(
  tool: AnyToolDefinition,
  args: Record<string, unknown>,
  ctx: ToolContext,
  log: Logger,
): Promise<ToolResult | ToolFailure> {
  try {
    return await tool.execute(args, ctx);
  } catch (error) {
    if (!isToolError(error)) {
      log.error(`tool ${tool.id} failed unexpectedly`, { error: error instanceof Error ? error.stack : String(error) });
    }
    return toFailure(error);
  }
}

export function createReadRunner(log: Logger): ToolRunner {
  return async (tool, args, ctx) => ({ body: await executeSafely(tool, args, ctx, log) });
}
