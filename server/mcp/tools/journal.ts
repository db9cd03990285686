// The journal family over MCP: mutation_result polls a mutation's recorded outcome by call id (the kernel's /j),
// for a call that answered still pending or running, or to look up what an earlier call did.
import { z } from "zod";
import { CALL_ID_PATTERN, MAX_WAIT_MS } from "../../mutation/journal/controls.js";
import { terminalText } from "./shell.js";
import { answerOf, jsonText, MAX_SETTLE_MS, type McpToolSpec } from "./spec.js";

/** mutation_result's wait when none is given: the foreground bound, below every tested client's tool timeout. */
const DEFAULT_RESULT_WAIT_MS = MAX_SETTLE_MS;

const resultInput = z.strictObject({
  callId: z
    .string()
    .regex(CALL_ID_PATTERN)
    .describe("The callId a mutation answered (or the idempotency key it was given)."),
  wait: z
    .number()
    .int()
    .min(0)
    .max(MAX_SETTLE_MS)
    .optional()
    .describe(
      `Milliseconds to wait for a running intent to finish (default and most ${MAX_SETTLE_MS}); still running then: it answers running again with the same next call.`,
    ),
});

const mutationResult: McpToolSpec = {
  name: "mutation_result",
  kernel: "result",
  title: "Poll a mutation's result",
  description:
    "The outcome of an earlier edit, write, patch or shell call by its callId (pending, running, its result or its error). Never runs anything again.",
  input: resultInput,
  contentFields: [],
  annotations: { readOnlyHint: true, openWorldHint: false },
  // The polled call's own answer, whichever tool it was: what every poll answer carries, other fields open (the
  // kernel's union of every mutation tool's answer would be 1.5 KB of tools/list for the same facts).
  output: () =>
    z.looseObject({
      ok: z.literal(true),
      callId: z.string(),
      state: z.enum(["succeeded", "pending", "running"]),
      tool: z.string(),
    }),
  async call(args, call) {
    const { callId, wait } = args as z.infer<typeof resultInput>;
    const settleMs = wait ?? DEFAULT_RESULT_WAIT_MS;
    // A command's outcome reads as the shell call's own answer would have (exit code, stdout, stderr).
    return answerOf(
      await call.run("result", { call: callId, wait: Math.min(settleMs, MAX_WAIT_MS) }, { settleMs }),
      (body) => (body.tool === "terminal" ? terminalText(body) : jsonText(body)),
    );
  },
};

export const journalTools: readonly McpToolSpec[] = [mutationResult];
