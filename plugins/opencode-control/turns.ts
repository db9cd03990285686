// One prompt's outcome, by exact identity (session + the user message id urlbridge chose): its result is the last
// assistant message whose parentID is that id, complete only with finish "stop"; errors and aborts say so. Busy
// sessions, pending permission or question walls and unadmitted prompts each have their own state.
import type { Api, Message, PermissionRequest, QuestionRequest } from "./api.js";

export type TurnState =
  "not-admitted" | "queued" | "running" | "blocked" | "completed" | "failed" | "aborted" | "incomplete";

/**
 * States a wait stops at. "not-admitted" is not one: prompt_async answers 204 before OpenCode stores the user
 * message, so a just-admitted prompt reads as absent for a moment; a wait keeps reading until its bound.
 */
export const TERMINAL_STATES: ReadonlySet<TurnState> = new Set(["completed", "failed", "aborted", "incomplete"]);

export interface Turn {
  state: TurnState;
  /** The assistant message the state comes from, when there is one. */
  assistantMessageId?: string;
  finish?: string;
  error?: { name: string; message?: string };
  /** Text of the result's text parts (completed, or the partial answer of an incomplete or failed turn). */
  text?: string;
  /** Tools the turn ran, in order (names only). */
  tools?: string[];
  retry?: { attempt: number; next: number };
  requests?: Array<{ kind: "permission" | "question"; id: string }>;
}

export const textOf = (m: Message): string =>
  m.parts
    .filter((p) => p.type === "text" && typeof p.text === "string")
    .map((p) => p.text)
    .join("");

/** Pending walls of one session, in the directory it runs in. */
export async function requestsOf(
  api: Api,
  directory: string,
  sessionId: string,
): Promise<{ permissions: PermissionRequest[]; questions: QuestionRequest[] }> {
  const [permissions, questions] = await Promise.all([api.permissions(directory), api.questions(directory)]);
  return {
    permissions: permissions.filter((p) => p.sessionID === sessionId),
    questions: questions.filter((q) => q.sessionID === sessionId),
  };
}

export async function readTurn(api: Api, directory: string, sessionId: string, messageId: string): Promise<Turn> {
  const user = await api.message(directory, sessionId, messageId);
  if (!user) return { state: "not-admitted" };
  // The status first, then the messages: read together, an idle status could postdate a message list taken
  // mid-turn (its last step a tool call), and a finished turn would read as incomplete. Idle seen first means
  // the messages read after it hold the turn's end.
  const statuses = await api.statuses(directory);
  const messages = await api.messages(directory, sessionId);
  const segment = messages.filter((m) => m.info.role === "assistant" && m.info.parentID === messageId);
  const last = segment[segment.length - 1];
  const status = statuses[sessionId];
  const busy = status !== undefined && status.type !== "idle";
  const tools = segment.flatMap((m) => m.parts.filter((p) => p.type === "tool" && p.tool).map((p) => p.tool!));
  const base = {
    ...(last ? { assistantMessageId: last.info.id, ...(last.info.finish ? { finish: last.info.finish } : {}) } : {}),
    ...(tools.length ? { tools } : {}),
  };
  if (last?.info.error) {
    const error = {
      name: last.info.error.name,
      ...(last.info.error.data?.message ? { message: last.info.error.data.message.slice(0, 500) } : {}),
    };
    return {
      ...base,
      state: last.info.error.name === "MessageAbortedError" ? "aborted" : "failed",
      error,
      text: textOf(last),
    };
  }
  if (last && last.info.finish === "stop" && last.info.time.completed !== undefined && !busy)
    return { ...base, state: "completed", text: textOf(last) };
  if (busy) {
    const walls = await requestsOf(api, directory, sessionId);
    const requests = [
      ...walls.permissions.map((p) => ({ kind: "permission" as const, id: p.id })),
      ...walls.questions.map((q) => ({ kind: "question" as const, id: q.id })),
    ];
    if (requests.length > 0) return { ...base, state: "blocked", requests };
    const retry = status.type === "retry" ? { retry: { attempt: status.attempt, next: status.next } } : {};
    return { ...base, state: "running", ...retry };
  }
  // Idle: a later prompt in the same session answered instead, the turn stopped short, or it has not started yet.
  if (last) return { ...base, state: last.info.finish === "stop" ? "completed" : "incomplete", text: textOf(last) };
  return { ...base, state: "queued" };
}

/** The last user message of a session: the current prompt of a worker. */
export function latestPrompt(messages: Message[]): string | undefined {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]!.info.role === "user") return messages[i]!.info.id;
  return undefined;
}
