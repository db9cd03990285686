// result (/j): polls the intent journal by call id. A running intent can be waited on for up to 20 s (MAX_WAIT_MS);
// a finished one returns its recorded body, including the structured error of a failure.
import { z } from "zod";
import { ErrorCode, ToolError } from "../../errors.js";
import { defineTool } from "../../kernel/tool/definition.js";
import { runtimeOf } from "./context.js";
import { CALL_ID_PATTERN, DEFAULT_WAIT_MS, MAX_WAIT_MS, MIN_WAIT_MS } from "./controls.js";
import type { IntentBody } from "./intent.js";
import { isTombstone, presentFinished, presentTombstone, presentUnfinished } from "./present.js";
import { pollOutputOf } from "./envelope.js";
import { applyPatchTool } from "../files/apply-patch/index.js";
import { editTool } from "../files/edit.js";
import { writeTool } from "../files/write.js";
import { terminalTool } from "../terminal/terminal.js";
import { terminalInputTool } from "../terminal/pty/terminal-input.js";
import { revertTool } from "../review/revert.js";

/**
 * What a successful /j answers for the native tools' intents: the recorded success (with callId, state and tool)
 * or the pending/running envelope (with tool). A failed or expired intent answers ok:false (envelope.ts
 * pollFailure) through the same execute: the poll worked, the polled intent did not.
 */
export const pollOutput = pollOutputOf([
  writeTool,
  editTool,
  applyPatchTool,
  terminalTool,
  terminalInputTool,
  revertTool,
]);
export type PollOutput = z.infer<typeof pollOutput>;

export const resultTool = defineTool({
  id: "result",
  route: "j",
  longRoutes: ["journal", "poll"],
  capability: "mutation",
  description: "Poll a mutation's result by call id: pending, running, succeeded or failed (wait= up to 20000 ms).",
  example: "/j?call=auto:write:0123456789abcdef",
  schema: z.object({
    call: z.string().regex(CALL_ID_PATTERN, "call ids look like auto:<tool>:<hex>"),
    wait: z.number().int().min(MIN_WAIT_MS).max(MAX_WAIT_MS).optional(),
  }),
  output: pollOutput,
  url: {},
  journal: { record: false },
  async execute(args, ctx) {
    const { journal } = runtimeOf(ctx);
    const scope = { sessionId: ctx.session.id, generation: ctx.session.generation };
    const flight = journal.inflight(scope, args.call);
    if (flight) {
      const body = await journal.settle(flight, args.wait ?? DEFAULT_WAIT_MS);
      if (body) return recordedBody(presentFinished(args.call, body, undefined), flight.row.tool);
      return {
        ...presentUnfinished(
          args.call,
          journal.stateOf(flight),
          ctx.urls,
          undefined,
          flight.progress,
          undefined,
          args.wait,
        ),
        tool: flight.row.tool,
      };
    }
    const row = journal.find(scope, args.call);
    if (!row) {
      throw new ToolError(
        ErrorCode.intentNotFound,
        `No intent ${args.call} in this session. Call ids come from a mutation's response (callId); journals start clean after a rotation.`,
        {
          detail: { call: args.call },
          retryable: false,
        },
      );
    }
    if (isTombstone(row)) return recordedBody(presentTombstone(row, undefined, undefined), row.tool);
    if (row.result === undefined)
      return {
        ...presentUnfinished(
          row.callId,
          row.state === "running" ? "running" : "pending",
          ctx.urls,
          undefined,
          undefined,
          undefined,
          args.wait,
        ),
        tool: row.tool,
      };
    return recordedBody(presentFinished(row.callId, row.result as IntentBody, undefined), row.tool);
  },
});

/** The poll itself succeeded; what it returns is the intent's recorded body, which may be a failure (ok:false). */
function recordedBody(body: IntentBody, tool: string): PollOutput {
  return { ...body, tool } as unknown as PollOutput;
}
