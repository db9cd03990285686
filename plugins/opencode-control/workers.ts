// Task-like workers: an OpenCode session tagged as urlbridge's, under a urlbridge-owned group session, with a
// derived permission ceiling. Its identity is session id + the user message id we chose. One prompt in flight per
// worker; an admission whose outcome is unknown is reconciled by reading that exact message, never sent again.
import { setTimeout as sleep } from "node:timers/promises";
import { ErrorCode, ToolError } from "../../server/errors.js";
import { type SessionInfo, urlbridgeMetaOf } from "./api.js";
import { assertCovers, grantOf, workerRules, type WorkerGrant } from "./authority.js";
import { type Call, readUrl, visibleSessions, visibleWorker } from "./call.js";
import { ascendingMessageId } from "./ids.js";
import { WAIT_DEFAULT_MS, WAIT_MAX_MS, WAIT_POLL_MS } from "./settings.js";
import { latestPrompt, readTurn, TERMINAL_STATES, type Turn } from "./turns.js";

/** How long an uncertain admission is reconciled (the exact message read back) before it is reported uncertain. */
const RECONCILE_MS = 3_000;

export interface PromptInput {
  prompt: string;
  agent?: string | undefined;
  /** "provider/model" */
  model?: string | undefined;
}

export type Admission = "admitted" | "uncertain";

export interface WorkerHandle {
  sessionId: string;
  messageId: string;
  admission: Admission;
  waitUrl: string;
}

/** The group session urlbridge's workers of one directory live under; made once per plugin, found again after a restart. */
async function groupFor(call: Call): Promise<string> {
  const { groups } = call;
  const key = call.root;
  let group = groups.get(key);
  if (!group) {
    group = (async () => {
      const existing = (await call.api.sessions(call.root)).find(
        (s) => urlbridgeMetaOf(s)?.kind === "group" && s.directory === call.root && !s.parentID,
      );
      if (existing) return existing.id;
      const made = await call.api.createSession(call.root, {
        title: "urlbridge workers",
        metadata: { urlbridge: { kind: "group" } },
      });
      return made.id;
    })();
    groups.set(key, group);
    group.catch(() => groups.delete(key));
  }
  return group;
}

function promptBody(messageId: string, input: PromptInput): Record<string, unknown> {
  const body: Record<string, unknown> = { messageID: messageId, parts: [{ type: "text", text: input.prompt }] };
  if (input.agent) body.agent = input.agent;
  if (input.model) {
    const slash = input.model.indexOf("/");
    if (slash <= 0 || slash === input.model.length - 1) {
      throw new ToolError(
        ErrorCode.invalidParameter,
        `model must be "provider/model" (opencode_info models lists them), not "${input.model}".`,
        { detail: { parameter: "model" } },
      );
    }
    body.model = { providerID: input.model.slice(0, slash), modelID: input.model.slice(slash + 1) };
  }
  return body;
}

/**
 * Sends one prompt with our message id. Refused or unreachable: nothing was admitted, and the error says so. Sent
 * but unanswered: the exact message is read back for a bounded time; still absent, the admission is "uncertain"
 * and the prompt is never sent again (a re-sent id appends text to the same message in OpenCode 1.18).
 */
export async function admitPrompt(
  call: Call,
  directory: string,
  sessionId: string,
  messageId: string,
  input: PromptInput,
): Promise<Admission> {
  const sent = await call.api.promptAsync(directory, sessionId, promptBody(messageId, input));
  if (sent.kind === "answered") {
    if (sent.status >= 200 && sent.status < 300) return "admitted";
    throw new ToolError(
      ErrorCode.opencodeFailed,
      `OpenCode refused the prompt (HTTP ${sent.status}); nothing was admitted. ${JSON.stringify(sent.body ?? "").slice(0, 300)}`,
      { detail: { status: sent.status } },
    );
  }
  if (sent.kind === "unreached") {
    throw new ToolError(
      ErrorCode.opencodeUnavailable,
      `OpenCode could not be reached (${sent.error}); the prompt was not sent.`,
      { detail: { error: sent.error }, agentAction: "wait_and_retry" },
    );
  }
  const deadline = Date.now() + RECONCILE_MS;
  while (Date.now() < deadline) {
    const found = await call.api.message(directory, sessionId, messageId).catch(() => undefined);
    if (found) return "admitted";
    await sleep(WAIT_POLL_MS);
  }
  return "uncertain";
}

export function waitArgs(sessionId: string, messageId: string): Record<string, unknown> {
  return { action: "wait", sessionId, messageId };
}

/** Refuses a new admission while `max` urlbridge workers of this root are running. */
export async function assertCapacity(call: Call, adding: number): Promise<void> {
  const [sessions, statuses] = await Promise.all([visibleSessions(call), call.api.statuses(call.root)]);
  const running = sessions.filter(
    (s) => urlbridgeMetaOf(s)?.kind === "worker" && statuses[s.id] && statuses[s.id]!.type !== "idle",
  ).length;
  if (running + adding > call.settings.maxWorkers) {
    throw new ToolError(
      ErrorCode.opencodeWorkerLimit,
      `${running} urlbridge workers are running and the ceiling is ${call.settings.maxWorkers} (URLBRIDGE_OPENCODE_MAX_WORKERS); wait for one to finish or cancel one, then start again with a fresh run=.`,
      {
        detail: { running, adding, max: call.settings.maxWorkers },
        agentAction: "wait_and_retry",
      },
    );
  }
}

export interface StartOptions {
  title?: string | undefined;
  parentId?: string | undefined;
  swarm?: string | undefined;
}

/** Creates one worker session under the group (or a swarm) and admits its first prompt. */
export async function createWorker(
  call: Call,
  input: PromptInput,
  options: StartOptions = {},
  capacityChecked = false,
): Promise<WorkerHandle> {
  if (!capacityChecked) await assertCapacity(call, 1);
  const grant: WorkerGrant = grantOf(call.ctx.authority, call.settings);
  const parentID = options.parentId ?? (await groupFor(call));
  const messageId = ascendingMessageId();
  const callId = call.ctx.intent?.callId;
  const session = await call.api.createSession(call.root, {
    title: options.title ?? `urlbridge worker: ${input.prompt.slice(0, 60)}`,
    parentID,
    metadata: {
      urlbridge: {
        kind: "worker",
        grant,
        ...(options.swarm ? { swarm: options.swarm } : {}),
        ...(callId ? { callId } : {}),
        first: messageId,
      },
    },
    permission: workerRules(grant),
  });
  // Saved before the prompt leaves: if urlbridge dies now, recovery reads this exact message instead of re-sending.
  call.ctx.intent?.checkpoint({ directory: call.root, sessionId: session.id, messageId });
  const admission = await admitPrompt(call, call.root, session.id, messageId, input);
  return {
    sessionId: session.id,
    messageId,
    admission,
    waitUrl: readUrl(call, "opencode_worker", waitArgs(session.id, messageId)),
  };
}

/** Refuses a prompt while the session has one in flight (OpenCode would queue it and misattribute the answer). */
export async function assertIdle(call: Call, session: SessionInfo): Promise<void> {
  const statuses = await call.api.statuses(session.directory);
  const status = statuses[session.id];
  if (!status || status.type === "idle") return;
  const current = latestPrompt(await call.api.messages(session.directory, session.id));
  throw new ToolError(
    ErrorCode.opencodeBusy,
    `Session ${session.id} has a prompt in flight; one at a time. Wait for it (the wait URL), then send the next.`,
    {
      detail: { sessionId: session.id, ...(current ? { messageId: current } : {}) },
      agentAction: "poll",
      extra: current ? { wait: readUrl(call, "opencode_worker", waitArgs(session.id, current)) } : {},
    },
  );
}

/** A follow-up prompt to an idle worker: a new identity (same session, new message id). */
export async function continueWorker(call: Call, sessionId: string, input: PromptInput): Promise<WorkerHandle> {
  const session = await visibleWorker(call, sessionId);
  assertCovers(call.ctx.authority, urlbridgeMetaOf(session)?.grant, "This worker");
  await assertIdle(call, session);
  const messageId = ascendingMessageId();
  call.ctx.intent?.checkpoint({ directory: session.directory, sessionId, messageId });
  const admission = await admitPrompt(call, session.directory, sessionId, messageId, input);
  return { sessionId, messageId, admission, waitUrl: readUrl(call, "opencode_worker", waitArgs(sessionId, messageId)) };
}

/** Aborts the session's turn and rejects the walls it leaves behind (a pending permission survives abort). */
export async function abortSession(
  call: Call,
  session: SessionInfo,
): Promise<{ aborted: boolean; rejected: { permissions: number; questions: number } }> {
  const aborted = await call.api.abort(session.directory, session.id);
  const [permissions, questions] = await Promise.all([
    call.api.permissions(session.directory),
    call.api.questions(session.directory),
  ]);
  const mine = permissions.filter((p) => p.sessionID === session.id);
  const asked = questions.filter((q) => q.sessionID === session.id);
  await Promise.all([
    ...mine.map((p) => call.api.replyPermission(session.directory, p.id, "reject")),
    ...asked.map((q) => call.api.rejectQuestion(session.directory, q.id)),
  ]);
  return { aborted: aborted === true, rejected: { permissions: mine.length, questions: asked.length } };
}

export function clampWait(timeoutMs: number | undefined): number {
  return Math.min(Math.max(timeoutMs ?? WAIT_DEFAULT_MS, 0), WAIT_MAX_MS);
}

/** Reads the turn until it ends, hits a wall, or the bounded wait is over. */
export async function waitTurn(
  call: Call,
  directory: string,
  sessionId: string,
  messageId: string,
  timeoutMs: number,
): Promise<Turn> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const turn = await readTurn(call.api, directory, sessionId, messageId);
    if (
      TERMINAL_STATES.has(turn.state) ||
      turn.state === "blocked" ||
      Date.now() >= deadline ||
      call.ctx.signal.aborted
    )
      return turn;
    await sleep(Math.min(WAIT_POLL_MS, Math.max(0, deadline - Date.now())));
  }
}

/** The worker view every worker action answers with (the text, when any, is paged by the caller). */
export function workerView(call: Call, sessionId: string, messageId: string, turn: Turn) {
  const { text: _text, ...rest } = turn;
  const open = !TERMINAL_STATES.has(turn.state);
  return {
    sessionId,
    messageId,
    ...rest,
    ...(open ? { poll: readUrl(call, "opencode_worker", waitArgs(sessionId, messageId)) } : {}),
  };
}
