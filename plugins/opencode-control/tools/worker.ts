// opencode_worker: task-like delegated workers and swarms of them. Reads (list, get, wait, result, swarm_*) go on
// the read base; start, continue, cancel and the swarm mutations are journaled intents on the mutation base.
import { z } from "zod";
import { definePluginTool } from "../../../server/plugins/definition.js";
import { type Api, urlbridgeMetaOf } from "../api.js";
import {
  type Call,
  callOf,
  type PluginDeps,
  readUrl,
  requireField,
  sessionRow,
  visibleSession,
  visibleSessions,
  visibleWorker,
} from "../call.js";
import { pageFields, pageOf, textFields, textPageOf } from "../pages.js";
import { PROMPT_MAX_CHARS, SWARM_MAX, WAIT_MAX_MS } from "../settings.js";
import { cancelSwarm, continueSwarm, readSwarm, startSwarm, swarmView, waitSwarm } from "../swarms.js";
import { latestPrompt, readTurn } from "../turns.js";
import { abortSession, clampWait, continueWorker, createWorker, waitTurn, workerView } from "../workers.js";
import { actionOutput, directoryField, journalOf, messageIdField, sessionIdField } from "./common.js";

const READ_ACTIONS = ["list", "get", "wait", "result", "swarm_list", "swarm_get", "swarm_wait"] as const;
const MUTATION_ACTIONS = ["start", "continue", "cancel", "swarm_start", "swarm_continue", "swarm_cancel"] as const;

const prompt = z.string().min(1).max(PROMPT_MAX_CHARS);
const model = z.string().min(3).max(200).describe('"provider/model", as opencode_info models lists them');
const agent = z.string().min(1).max(64);

const schema = z.object({
  action: z.enum([...READ_ACTIONS, ...MUTATION_ACTIONS]),
  prompt: prompt.optional(),
  title: z.string().min(1).max(200).optional(),
  agent: agent.optional(),
  model: model.optional(),
  directory: directoryField.optional(),
  sessionId: sessionIdField.optional(),
  messageId: messageIdField.optional(),
  swarmId: sessionIdField.optional(),
  workers: z
    .array(
      z.strictObject({
        prompt,
        title: z.string().min(1).max(200).optional(),
        agent: agent.optional(),
        model: model.optional(),
      }),
    )
    .min(1)
    .max(SWARM_MAX)
    .optional()
    .describe(`swarm_start: 1 to ${SWARM_MAX} independent workers`),
  timeoutMs: z
    .number()
    .int()
    .min(0)
    .max(WAIT_MAX_MS)
    .optional()
    .describe(`wait, swarm_wait: how long to wait (default 20000, at most ${WAIT_MAX_MS})`),
  ...pageFields,
  ...textFields,
});
type Args = z.infer<typeof schema>;

async function result(call: Call, args: Args) {
  const sessionId = requireField(args.sessionId, "sessionId", args.action);
  const messageId = requireField(args.messageId, "messageId", args.action);
  // Any session inside the root: a prompt sent to an existing session (opencode_session send) is waited on here too.
  const session = await visibleSession(call, sessionId);
  const turn =
    args.action === "wait"
      ? await waitTurn(call, session.directory, sessionId, messageId, clampWait(args.timeoutMs))
      : await readTurn(call.api, session.directory, sessionId, messageId);
  const view = workerView(call, sessionId, messageId, turn);
  if (turn.text === undefined) return { worker: view };
  const page = textPageOf(turn.text, args);
  const next =
    page.nextTextOffset !== undefined
      ? {
          nextText: readUrl(call, "opencode_worker", {
            action: "result",
            sessionId,
            messageId,
            textOffset: page.nextTextOffset,
            textFingerprint: page.textFingerprint,
          }),
        }
      : {};
  return {
    worker: view,
    result: {
      ...(turn.assistantMessageId ? { assistantMessageId: turn.assistantMessageId } : {}),
      ...(turn.finish ? { finish: turn.finish } : {}),
      ...page,
      ...next,
    },
  };
}

async function read(call: Call, args: Args): Promise<Record<string, unknown>> {
  switch (args.action) {
    case "list":
    case "swarm_list": {
      const kind = args.action === "list" ? "worker" : "swarm";
      const sessions = (await visibleSessions(call))
        .filter((s) => urlbridgeMetaOf(s)?.kind === kind)
        .sort((a, b) => a.time.created - b.time.created);
      const page = pageOf(sessions, (s) => [s.id, s.time.updated], args, `${kind} list`);
      const statuses = await call.api.statuses(call.root);
      const items = page.items.map((s) => ({
        ...sessionRow(call, s),
        busy: (statuses[s.id]?.type ?? "idle") !== "idle",
      }));
      const next =
        page.page.nextOffset !== undefined
          ? {
              next: readUrl(call, "opencode_worker", {
                action: args.action,
                offset: page.page.nextOffset,
                fingerprint: page.page.fingerprint,
                ...(args.limit ? { limit: args.limit } : {}),
              }),
            }
          : {};
      return { [kind === "worker" ? "workers" : "swarms"]: items, page: page.page, ...next };
    }
    case "get": {
      const session = await visibleWorker(call, requireField(args.sessionId, "sessionId", "get"));
      const messageId = latestPrompt(await call.api.messages(session.directory, session.id));
      const turn = messageId ? await readTurn(call.api, session.directory, session.id, messageId) : undefined;
      return {
        worker: {
          ...sessionRow(call, session),
          ...(messageId && turn ? { current: workerView(call, session.id, messageId, turn) } : {}),
          permission: session.permission ?? [],
        },
      };
    }
    case "wait":
    case "result":
      return result(call, args);
    case "swarm_get":
    case "swarm_wait": {
      const swarmId = requireField(args.swarmId, "swarmId", args.action);
      const states =
        args.action === "swarm_wait"
          ? await waitSwarm(call, swarmId, clampWait(args.timeoutMs))
          : (await readSwarm(call, swarmId)).states;
      return { swarm: swarmView(call, swarmId, states) };
    }
    default:
      return mutate(call, args);
  }
}

async function mutate(call: Call, args: Args): Promise<Record<string, unknown>> {
  switch (args.action) {
    case "start": {
      const worker = await createWorker(
        call,
        { prompt: requireField(args.prompt, "prompt", "start"), agent: args.agent, model: args.model },
        { title: args.title },
      );
      return { worker, waitUrl: worker.waitUrl };
    }
    case "continue": {
      const worker = await continueWorker(call, requireField(args.sessionId, "sessionId", "continue"), {
        prompt: requireField(args.prompt, "prompt", "continue"),
        agent: args.agent,
        model: args.model,
      });
      return { worker, waitUrl: worker.waitUrl };
    }
    case "cancel": {
      const session = await visibleWorker(call, requireField(args.sessionId, "sessionId", "cancel"));
      return { sessionId: session.id, ...(await abortSession(call, session)) };
    }
    case "swarm_start": {
      const members = requireField(args.workers, "workers", "swarm_start");
      const swarm = await startSwarm(call, args.title, members);
      return { swarm, waitUrl: readUrl(call, "opencode_worker", { action: "swarm_wait", swarmId: swarm.swarmId }) };
    }
    case "swarm_continue": {
      const swarm = await continueSwarm(call, requireField(args.swarmId, "swarmId", "swarm_continue"), {
        prompt: requireField(args.prompt, "prompt", "swarm_continue"),
        agent: args.agent,
        model: args.model,
      });
      return { swarm, waitUrl: readUrl(call, "opencode_worker", { action: "swarm_wait", swarmId: swarm.swarmId }) };
    }
    case "swarm_cancel":
      return { swarm: await cancelSwarm(call, requireField(args.swarmId, "swarmId", "swarm_cancel")) };
    default:
      return read(call, args);
  }
}

export function workerTool(deps: PluginDeps & { api: Api }) {
  return definePluginTool({
    id: "opencode_worker",
    capability: "read",
    description:
      "Delegates task-like workers to OpenCode: start one (prompt), wait on it by exact identity (sessionId + messageId; bounded, answers a poll URL), read its result, continue or cancel it; swarm_* do the same for a batch of independent workers. Workers cannot leave the project, get no shell without terminal and no edits without write.",
    schema,
    output: actionOutput,
    example: { action: "list" },
    mutations: {
      field: "action",
      actions: MUTATION_ACTIONS,
      example: { action: "start", prompt: "Run the tests and report the result." },
    },
    journal: journalOf(deps.api),
    // Every mutation action bounds itself by the call's permissions (worker ceilings, grants, existing sessions).
    openToReadOnly: true,
    authority: (args) => (args.directory ? { root: args.directory } : undefined),
    async execute(args, ctx) {
      const call = callOf(deps, ctx);
      return { ok: true as const, action: args.action, ...(await read(call, args)) };
    },
  });
}
