// opencode_request: the permission and question walls urlbridge's workers hit, routed back to the agent that
// controls them. list reads them; reply_permission, answer_question and reject_question answer one (journaled).
import { z } from "zod";
import { ErrorCode, ToolError } from "../../../server/errors.js";
import { definePluginTool } from "../../../server/plugins/definition.js";
import { type Api, type SessionInfo, urlbridgeMetaOf } from "../api.js";
import { assertCovers } from "../authority.js";
import { type Call, callOf, type PluginDeps, requireField, visibleSessions } from "../call.js";
import { actionOutput, directoryField, journalOf } from "./common.js";

const MUTATION_ACTIONS = ["reply_permission", "answer_question", "reject_question"] as const;

const schema = z.object({
  action: z.enum(["list", ...MUTATION_ACTIONS]),
  requestId: z
    .string()
    .regex(/^(per|que)_[A-Za-z0-9]{1,64}$/, "a request id from list (per_... or que_...)")
    .optional(),
  reply: z
    .enum(["once", "always", "reject"])
    .optional()
    .describe("reply_permission: once, always (this pattern, for this OpenCode project) or reject"),
  message: z.string().max(2000).optional().describe("reply_permission reject: why, passed to the model"),
  answers: z
    .array(z.array(z.string().max(500)).max(20))
    .max(20)
    .optional()
    .describe("answer_question: per question, the chosen option labels"),
  directory: directoryField.optional(),
});
type Args = z.infer<typeof schema>;

/** The walls of urlbridge's workers inside the root, with the session each belongs to. */
async function walls(call: Call) {
  const workers = new Map<string, SessionInfo>(
    (await visibleSessions(call)).filter((s) => urlbridgeMetaOf(s)?.kind === "worker").map((s) => [s.id, s]),
  );
  const dirs = [...new Set([call.root, ...[...workers.values()].map((s) => s.directory)])];
  const lists = await Promise.all(
    dirs.map(async (d) => ({ permissions: await call.api.permissions(d), questions: await call.api.questions(d) })),
  );
  const seen = new Set<string>();
  const permissions = lists
    .flatMap((l) => l.permissions)
    .filter((p) => workers.has(p.sessionID) && !seen.has(p.id) && seen.add(p.id));
  const questions = lists
    .flatMap((l) => l.questions)
    .filter((q) => workers.has(q.sessionID) && !seen.has(q.id) && seen.add(q.id));
  return { workers, permissions, questions };
}

async function run(call: Call, args: Args): Promise<Record<string, unknown>> {
  const { workers, permissions, questions } = await walls(call);
  if (args.action === "list") {
    return {
      permissions: permissions.map((p) => ({
        requestId: p.id,
        sessionId: p.sessionID,
        permission: p.permission,
        patterns: p.patterns,
        ...(p.tool ? { messageId: p.tool.messageID } : {}),
      })),
      questions: questions.map((q) => ({
        requestId: q.id,
        sessionId: q.sessionID,
        questions: q.questions.map((x) => ({
          question: x.question ?? "",
          header: x.header ?? "",
          options: (x.options ?? []).map((o) => o.label),
          multiple: x.multiple ?? false,
        })),
      })),
    };
  }
  const requestId = requireField(args.requestId, "requestId", args.action);
  const pending =
    args.action === "reply_permission"
      ? permissions.find((p) => p.id === requestId)
      : questions.find((q) => q.id === requestId);
  if (!pending) {
    throw new ToolError(
      ErrorCode.opencodeNotFound,
      `No pending ${args.action === "reply_permission" ? "permission" : "question"} request ${requestId} of a urlbridge worker inside this project (answered already, or not ours). list shows the pending ones.`,
      { detail: { requestId } },
    );
  }
  const session = workers.get(pending.sessionID)!;
  // Answering a wall lets the worker go on: the caller needs the authority the worker was started with.
  if (args.action !== "reject_question" && !(args.action === "reply_permission" && args.reply === "reject"))
    assertCovers(call.ctx.authority, urlbridgeMetaOf(session)?.grant, "This worker");
  if (args.action === "reply_permission") {
    const reply = requireField(args.reply, "reply", args.action);
    await call.api.replyPermission(session.directory, requestId, reply, args.message);
    return { requestId, sessionId: session.id, reply };
  }
  if (args.action === "answer_question") {
    await call.api.replyQuestion(session.directory, requestId, requireField(args.answers, "answers", args.action));
    return { requestId, sessionId: session.id, answered: true };
  }
  await call.api.rejectQuestion(session.directory, requestId);
  return { requestId, sessionId: session.id, rejected: true };
}

export function requestTool(deps: PluginDeps & { api: Api }) {
  return definePluginTool({
    id: "opencode_request",
    capability: "read",
    description:
      "Lists the permission and question walls urlbridge's workers are waiting on, and answers them: reply_permission (once, always, reject), answer_question, reject_question.",
    schema,
    output: actionOutput,
    example: { action: "list" },
    mutations: {
      field: "action",
      actions: MUTATION_ACTIONS,
      example: { action: "reply_permission", requestId: "per_...", reply: "once" },
    },
    journal: journalOf(deps.api),
    // Every mutation action bounds itself by the call's permissions (worker ceilings, grants, existing sessions).
    openToReadOnly: true,
    authority: (args) => (args.directory ? { root: args.directory } : undefined),
    async execute(args, ctx) {
      return { ok: true as const, action: args.action, ...(await run(callOf(deps, ctx), args)) };
    },
  });
}
