// opencode_session: OpenCode sessions whose canonical directory is inside the approved root, urlbridge's and
// others'. Reads: list, get, messages, children. Mutations: send (a prompt with exact identity; a session urlbridge
// did not make needs write + terminal and URLBRIDGE_OPENCODE_ALLOW_EXISTING) and abort (always allowed).
import { z } from "zod";
import { definePluginTool } from "../../../server/plugins/definition.js";
import { type Api, urlbridgeMetaOf } from "../api.js";
import { assertCovers, assertMayPromptExisting, insideRoot } from "../authority.js";
import {
  type Call,
  callOf,
  type PluginDeps,
  readUrl,
  requireField,
  sessionRow,
  visibleSession,
  visibleSessions,
} from "../call.js";
import { ascendingMessageId } from "../ids.js";
import { pageFields, pageOf, textFields, textPageOf } from "../pages.js";
import { PREVIEW_CHARS, PROMPT_MAX_CHARS } from "../settings.js";
import { textOf } from "../turns.js";
import { abortSession, admitPrompt, assertIdle, waitArgs } from "../workers.js";
import { actionOutput, directoryField, journalOf, messageIdField, sessionIdField } from "./common.js";

const READ_ACTIONS = ["list", "get", "messages", "children"] as const;
const MUTATION_ACTIONS = ["send", "abort"] as const;

const schema = z.object({
  action: z.enum([...READ_ACTIONS, ...MUTATION_ACTIONS]),
  sessionId: sessionIdField.optional(),
  messageId: messageIdField.optional().describe("messages: this one message in full (its text paged)"),
  prompt: z.string().min(1).max(PROMPT_MAX_CHARS).optional(),
  agent: z.string().min(1).max(64).optional(),
  model: z.string().min(3).max(200).optional(),
  directory: directoryField.optional(),
  ...pageFields,
  ...textFields,
});
type Args = z.infer<typeof schema>;

async function messages(call: Call, args: Args) {
  const session = await visibleSession(call, requireField(args.sessionId, "sessionId", "messages"));
  const all = await call.api.messages(session.directory, session.id);
  if (args.messageId) {
    const one = all.find((m) => m.info.id === args.messageId);
    if (!one) return { sessionId: session.id, message: null };
    const page = textPageOf(textOf(one), args);
    const next =
      page.nextTextOffset !== undefined
        ? {
            nextText: readUrl(call, "opencode_session", {
              action: "messages",
              sessionId: session.id,
              messageId: one.info.id,
              textOffset: page.nextTextOffset,
              textFingerprint: page.textFingerprint,
            }),
          }
        : {};
    return {
      sessionId: session.id,
      message: {
        id: one.info.id,
        role: one.info.role,
        ...(one.info.parentID ? { parentId: one.info.parentID } : {}),
        ...(one.info.finish ? { finish: one.info.finish } : {}),
        ...page,
        ...next,
      },
    };
  }
  const page = pageOf(all, (m) => [m.info.id, m.info.time.completed ?? null, m.parts.length], args, "message list");
  const rows = page.items.map((m) => {
    const text = textOf(m);
    return {
      id: m.info.id,
      role: m.info.role,
      ...(m.info.parentID ? { parentId: m.info.parentID } : {}),
      ...(m.info.finish ? { finish: m.info.finish } : {}),
      ...(m.info.error ? { error: m.info.error.name } : {}),
      created: m.info.time.created,
      preview: text.slice(0, PREVIEW_CHARS),
      textLength: text.length,
      tools: m.parts.filter((p) => p.type === "tool" && p.tool).map((p) => p.tool!),
    };
  });
  const next =
    page.page.nextOffset !== undefined
      ? {
          next: readUrl(call, "opencode_session", {
            action: "messages",
            sessionId: session.id,
            offset: page.page.nextOffset,
            fingerprint: page.page.fingerprint,
            ...(args.limit ? { limit: args.limit } : {}),
          }),
        }
      : {};
  return { sessionId: session.id, messages: rows, page: page.page, ...next };
}

async function run(call: Call, args: Args): Promise<Record<string, unknown>> {
  switch (args.action) {
    case "list": {
      const sessions = (await visibleSessions(call)).sort((a, b) => a.time.created - b.time.created);
      const page = pageOf(sessions, (s) => [s.id, s.time.updated], args, "session list");
      const next =
        page.page.nextOffset !== undefined
          ? {
              next: readUrl(call, "opencode_session", {
                action: "list",
                offset: page.page.nextOffset,
                fingerprint: page.page.fingerprint,
                ...(args.limit ? { limit: args.limit } : {}),
              }),
            }
          : {};
      return { sessions: page.items.map((s) => sessionRow(call, s)), page: page.page, ...next };
    }
    case "get": {
      const session = await visibleSession(call, requireField(args.sessionId, "sessionId", "get"));
      const statuses = await call.api.statuses(session.directory);
      return {
        session: {
          ...sessionRow(call, session),
          status: statuses[session.id]?.type ?? "idle",
          cost: session.cost ?? 0,
          tokens: session.tokens ?? null,
        },
      };
    }
    case "children": {
      const session = await visibleSession(call, requireField(args.sessionId, "sessionId", "children"));
      const children = (await call.api.children(session.directory, session.id)).filter((c) =>
        insideRoot(call.root, c.directory),
      );
      return { sessionId: session.id, children: children.map((c) => sessionRow(call, c)) };
    }
    case "messages":
      return messages(call, args);
    case "send": {
      const session = await visibleSession(call, requireField(args.sessionId, "sessionId", "send"));
      const meta = urlbridgeMetaOf(session);
      if (meta?.kind === "worker") assertCovers(call.ctx.authority, meta.grant, "This worker");
      else assertMayPromptExisting(call.ctx.authority, call.settings);
      await assertIdle(call, session);
      const messageId = ascendingMessageId();
      call.ctx.intent?.checkpoint({ directory: session.directory, sessionId: session.id, messageId });
      const admission = await admitPrompt(call, session.directory, session.id, messageId, {
        prompt: requireField(args.prompt, "prompt", "send"),
        agent: args.agent,
        model: args.model,
      });
      return {
        sessionId: session.id,
        messageId,
        admission,
        waitUrl: readUrl(call, "opencode_worker", waitArgs(session.id, messageId)),
      };
    }
    case "abort": {
      const session = await visibleSession(call, requireField(args.sessionId, "sessionId", "abort"));
      return { sessionId: session.id, ...(await abortSession(call, session)) };
    }
  }
}

export function sessionTool(deps: PluginDeps & { api: Api }) {
  return definePluginTool({
    id: "opencode_session",
    capability: "read",
    description:
      "Inspects OpenCode sessions inside the project (list, get, messages with fingerprinted pages, children) and drives them: send a prompt (existing sessions need write and terminal), abort (always allowed; stale permission walls are rejected).",
    schema,
    output: actionOutput,
    example: { action: "list" },
    mutations: { field: "action", actions: MUTATION_ACTIONS, example: { action: "abort", sessionId: "ses_..." } },
    journal: journalOf(deps.api),
    // Every mutation action bounds itself by the call's permissions (worker ceilings, grants, existing sessions).
    openToReadOnly: true,
    authority: (args) => (args.directory ? { root: args.directory } : undefined),
    async execute(args, ctx) {
      return { ok: true as const, action: args.action, ...(await run(callOf(deps, ctx), args)) };
    },
  });
}
