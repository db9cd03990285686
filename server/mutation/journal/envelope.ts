// The intent journal's envelope as zod schemas: the fields present.ts's present* functions and the runner's
// replays add to a journaled tool's execute result, and `journaledOutput`, the schema of what the wire carries.
import { z } from "zod";
import type { AgentAction } from "../../errors.js";
import { ErrorCode } from "../../errors.js";
import type { AnyToolDefinition, OutputSchema } from "../../kernel/tool/definition.js";

const AGENT_ACTIONS = [
  "correct_request",
  "fetch_repair",
  "stage_content",
  "reread_then_retry",
  "run_foreground",
  "poll",
  "wait_and_retry",
  "enable_in_control_plane",
  "stop",
] as const satisfies readonly AgentAction[];
// Fails to compile when errors.ts gains an action this list lacks.
type UnlistedAgentAction = Exclude<AgentAction, (typeof AGENT_ACTIONS)[number]>;
const everyAgentActionListed: [UnlistedAgentAction] extends [never] ? true : UnlistedAgentAction = true;
void everyAgentActionListed;

export const agentActionField = z
  .enum(AGENT_ACTIONS)
  .describe("What to do next: fetch_repair fetches `repair`, poll fetches `poll`, stop means do not call again.");

type ErrorCodeLiteral = (typeof ErrorCode)[keyof typeof ErrorCode];
/** Every stable error code (server/errors.ts); docs/PROTOCOL.md §3 says what each means. */
export const errorCodeField = z
  .enum(Object.values(ErrorCode) as [ErrorCodeLiteral, ...ErrorCodeLiteral[]])
  .describe("Stable error code; repairHint says what to do next.");

const callIdField = z
  .string()
  .describe(
    "The intent's call id: fetch /j?call=<callId> for its outcome. Fetching the same URL again (or giving call=) never runs it twice.",
  );

/** How the journal answered, when it is worth the agent's attention: a new intent's answer has no dedupe. */
export const dedupeField = z
  .enum(["replayed", "joined"])
  .describe(
    "replayed: this call ran before and this is its recorded answer (it did not run again); joined: an identical call was still running and this is its answer.",
  );

const pollField = z
  .string()
  .describe("Exact URL to fetch for the outcome (waits up to wait= ms there); never rebuild it.");

const repeatFields = {
  repeat: z
    .string()
    .optional()
    .describe(
      "Replays only, of tools that opt in (terminal): the project changed since this ran. Exact URL that runs the call again now.",
    ),
  repeatHint: z.string().optional().describe("Says why `repeat` is offered; present with it."),
  changedSince: z
    .strictObject({
      hint: z.string(),
      read: z.string().optional().describe("Exact /r of the files this call named, to see them now."),
    })
    .optional()
    .describe(
      "Replays only, of file mutations (write, edit, apply_patch): the project changed since this ran, so this recorded answer is not the current state.",
    ),
};

/** What presentFinished and the runner's replay add to a succeeded intent's recorded body. */
export const succeededFields = {
  callId: callIdField,
  state: z.literal("succeeded").describe("The intent finished and this is its result."),
  dedupe: dedupeField.optional(),
  ...repeatFields,
};

/**
 * The success body start-up recovery records for a write or edit whose rename landed before the bridge stopped
 * (server/mutation/files/single-file.ts): it replaces the tool's own result in replays and /j.
 */
export const recoveredOutput = z.strictObject({
  ok: z.literal(true),
  path: z.string().describe("The file the interrupted write or edit targeted, as /project/..."),
  recovered: z.literal(true).describe("The bridge restarted after this change landed; the file holds the new content."),
  hint: z.string(),
});
export type RecoveredOutput = z.infer<typeof recoveredOutput>;

/**
 * MCP only (server/mcp/call-tool.ts): the exact tool call that returns a pending or running intent's outcome (it waits
 * up to the foreground bound, and never runs the call again). URL answers carry `poll` instead.
 */
export const nextCallField = z
  .strictObject({
    tool: z.string().describe("The MCP tool to call: mutation_result."),
    arguments: z.strictObject({ callId: z.string() }).describe("Its arguments, as is."),
  })
  .describe("MCP: the exact next tool call for this intent's outcome; it never runs the call again.");

/** An intent still pending or running (presentUnfinished): where to poll for its result. */
export const unfinishedEnvelope = z.strictObject({
  ok: z.literal(true),
  state: z
    .enum(["pending", "running"])
    .describe(
      "pending: admitted, waiting (for a terminal slot, or the project's write queue); running: executing now.",
    ),
  callId: callIdField,
  dedupe: dedupeField.optional(),
  poll: pollField,
  agentAction: z.literal("poll"),
  hint: z.string(),
  progress: z
    .record(z.string(), z.unknown())
    .optional()
    .describe(
      'The tool\'s last progress snapshot. terminal: {phase:"queued", position, slots} while it waits for a slot, {phase:"running", since} once started.',
    ),
  next: nextCallField.optional(),
});
export type UnfinishedAnswer = z.infer<typeof unfinishedEnvelope>;

/** A finished intent whose result retention dropped (presentTombstone): it executed, and is not run again. */
export const tombstoneEnvelope = z.strictObject({
  ok: z.literal(false),
  errorCode: z.literal(ErrorCode.intentResultExpired),
  errorDetail: z.strictObject({
    tool: z.string(),
    outcome: z.enum(["succeeded", "failed"]),
    executedAt: z.string().describe("ISO 8601 time the intent finished."),
    outcomeErrorCode: z.string().optional().describe("The failure's errorCode, when it failed."),
  }),
  repairHint: z.string(),
  retryable: z.literal(false),
  agentAction: z.literal("stop"),
  callId: callIdField,
  state: z.enum(["succeeded", "failed"]),
  retry: z.string().optional().describe("Exact URL that runs the call again on purpose (a fresh run=); absent in /j."),
  dedupe: dedupeField.optional(),
});
export type TombstoneAnswer = z.infer<typeof tombstoneEnvelope>;

/**
 * A failed intent as the wire carries it: the tool's structured failure plus the journal fields. Open (loose),
 * since each error code adds its own recovery fields (read, retry, statusUrl, a command's stdout...).
 */
export const failedAnswer = z.looseObject({
  ok: z.literal(false),
  errorCode: errorCodeField,
  errorDetail: z.unknown().optional(),
  repairHint: z.string().optional(),
  retryable: z.boolean(),
  agentAction: agentActionField.optional(),
  repair: z.string().optional(),
  callId: callIdField,
  state: z.literal("failed"),
  dedupe: dedupeField.optional(),
  retry: z
    .string()
    .optional()
    .describe("Exact URL that runs the call again with a fresh identity (after an interruption or a busy refusal)."),
  ...repeatFields,
});

/** Adds `fields` to every object of a tool's output, through its (discriminated) unions. */
function withFields(schema: z.ZodType, fields: z.ZodRawShape): z.ZodType {
  if (schema instanceof z.ZodObject) return schema.extend(fields);
  if (schema instanceof z.ZodDiscriminatedUnion) {
    const options = schema.options.map((o) => withFields(o as z.ZodType, fields)) as unknown as [
      z.ZodObject,
      ...z.ZodObject[],
    ];
    return z.discriminatedUnion(schema.def.discriminator, options);
  }
  if (schema instanceof z.ZodUnion) {
    return z.union(schema.options.map((o) => withFields(o as z.ZodType, fields)) as [z.ZodType, ...z.ZodType[]]);
  }
  throw new Error(`journaledOutput: an output schema is a zod object or a union of objects, not ${schema.def.type}`);
}

type Finished<T> = T & {
  callId: string;
  state: "succeeded";
  dedupe?: "replayed" | "joined";
  repeat?: string;
  repeatHint?: string;
  changedSince?: { hint: string; read?: string };
};

/** A successful answer of a journaled tool on the wire: finished (its output, or recovery's), or still unfinished. */
export type JournaledAnswer<T> = Finished<T> | Finished<RecoveredOutput> | UnfinishedAnswer;

/**
 * The schema of a journaled tool's successful answers, for MCP's outputSchema: the tool's output plus the
 * succeeded fields, recovery's body (write and edit settle interrupted intents that landed as a success), or the
 * pending/running envelope. Failures (ok:false) are `failedAnswer` and `tombstoneEnvelope`.
 */
export function journaledOutput<O extends OutputSchema>(output: O): z.ZodType<JournaledAnswer<z.infer<O>>> {
  return z.union([
    withFields(output, succeededFields),
    recoveredOutput.extend(succeededFields),
    unfinishedEnvelope,
  ]) as unknown as z.ZodType<JournaledAnswer<z.infer<O>>>;
}

/** What a tool's successful answers look like on the wire: its output as is for unrecorded helpers (stage, /b, /j). */
export function wireOutputOf(tool: AnyToolDefinition): z.ZodType {
  const journaled = tool.capability === "mutation" && tool.journal?.record !== false;
  return journaled ? journaledOutput(tool.output) : tool.output;
}

const polledToolField = z
  .string()
  .describe("The id of the tool the intent ran (write, edit, apply_patch, terminal...).");
const polledFinished = { callId: callIdField, state: z.literal("succeeded") };

/** A successful /j answer: the polled intent's recorded success, or its pending/running envelope, with its tool. */
export type PollAnswer =
  ({ ok: true; callId: string; state: "succeeded" } & Record<string, unknown>) | Omit<UnfinishedAnswer, "dedupe">;

/**
 * The /j poll tool's successful answers for intents of `tools`: a succeeded intent's recorded body (the tool's
 * output or recovery's) with callId, state and tool, or the pending/running envelope with tool. MCP builds it
 * over the mutation tools it lists, plugin tools included.
 */
export function pollOutputOf(tools: AnyToolDefinition[]): z.ZodType<PollAnswer & { tool: string }> {
  const recorded = tools.filter((t) => t.output && t.journal?.record !== false);
  return z.union([
    ...recorded.map((t) => withFields(t.output!, { ...polledFinished, tool: z.literal(t.id) })),
    recoveredOutput.extend({ ...polledFinished, tool: polledToolField }),
    unfinishedEnvelope.omit({ dedupe: true }).extend({ tool: polledToolField }),
  ]) as unknown as z.ZodType<PollAnswer & { tool: string }>;
}

/** The /j poll tool's ok:false answers: the polled intent failed (its recorded failure), or its result expired. */
export const pollFailure = z.union([
  failedAnswer
    .omit({ dedupe: true, repeat: true, repeatHint: true, changedSince: true })
    .extend({ tool: polledToolField }),
  tombstoneEnvelope.omit({ retry: true, dedupe: true }).extend({ tool: polledToolField }),
]);
