// The slice of OpenCode's v1 HTTP API (opencode-ai 1.18.33, GET /doc) the plugin uses, typed by what it reads.
// Every route takes ?directory=<absolute path>: OpenCode serves the project of that directory.
import type { PermissionRule } from "./authority.js";
import type { OpenCodeClient } from "./client.js";

export interface UrlbridgeMeta {
  kind: "group" | "worker" | "swarm";
  grant?: { write: boolean; terminal: boolean; nested: boolean };
  swarm?: string;
  callId?: string;
}

export interface SessionInfo {
  id: string;
  title: string;
  directory: string;
  parentID?: string;
  agent?: string;
  model?: { id: string; providerID: string };
  cost?: number;
  tokens?: { input: number; output: number; reasoning: number; cache: { read: number; write: number } };
  metadata?: { urlbridge?: UrlbridgeMeta } & Record<string, unknown>;
  permission?: PermissionRule[];
  time: { created: number; updated: number; archived?: number };
}

export interface MessagePart {
  id: string;
  type: string;
  text?: string;
  tool?: string;
  state?: { status?: string };
}

export interface MessageInfo {
  id: string;
  sessionID: string;
  role: "user" | "assistant";
  parentID?: string;
  finish?: string;
  error?: { name: string; data?: { message?: string } };
  time: { created: number; completed?: number };
  modelID?: string;
  providerID?: string;
  agent?: string;
  cost?: number;
}

export interface Message {
  info: MessageInfo;
  parts: MessagePart[];
}

export type SessionStatus =
  { type: "idle" } | { type: "busy" } | { type: "retry"; attempt: number; message: string; next: number };

export interface PermissionRequest {
  id: string;
  sessionID: string;
  permission: string;
  patterns: string[];
  metadata?: Record<string, unknown>;
  tool?: { messageID: string; callID: string };
}

export interface QuestionRequest {
  id: string;
  sessionID: string;
  questions: Array<{
    question?: string;
    header?: string;
    options?: Array<{ label: string; description?: string }>;
    multiple?: boolean;
  }>;
}

export const urlbridgeMetaOf = (s: SessionInfo): UrlbridgeMeta | undefined => s.metadata?.urlbridge;

export function createApi(client: OpenCodeClient) {
  const q = (directory: string) => ({ query: { directory } });
  const enc = encodeURIComponent;
  return {
    client,
    sessions: (directory: string) => client.json<SessionInfo[]>("GET", "/session", q(directory)),
    session: (directory: string, id: string) => client.json<SessionInfo>("GET", `/session/${enc(id)}`, q(directory)),
    children: (directory: string, id: string) =>
      client.json<SessionInfo[]>("GET", `/session/${enc(id)}/children`, q(directory)),
    createSession: (
      directory: string,
      body: { title?: string; parentID?: string; metadata?: Record<string, unknown>; permission?: PermissionRule[] },
    ) => client.json<SessionInfo>("POST", "/session", { ...q(directory), body }),
    messages: (directory: string, id: string) =>
      client.json<Message[]>("GET", `/session/${enc(id)}/message`, q(directory)),
    /** The exact message, or undefined when OpenCode has none of that id (HTTP 404). */
    async message(directory: string, sessionId: string, messageId: string): Promise<Message | undefined> {
      const r = await client.send("GET", `/session/${enc(sessionId)}/message/${enc(messageId)}`, q(directory));
      if (r.kind === "answered" && r.status === 404) return undefined;
      if (r.kind === "answered" && r.status === 200) return r.body as Message;
      return client.json<Message>("GET", `/session/${enc(sessionId)}/message/${enc(messageId)}`, q(directory));
    },
    statuses: (directory: string) => client.json<Record<string, SessionStatus>>("GET", "/session/status", q(directory)),
    abort: (directory: string, id: string) => client.json<boolean>("POST", `/session/${enc(id)}/abort`, q(directory)),
    promptAsync: (directory: string, id: string, body: Record<string, unknown>) =>
      client.send("POST", `/session/${enc(id)}/prompt_async`, { ...q(directory), body }),
    permissions: (directory: string) => client.json<PermissionRequest[]>("GET", "/permission", q(directory)),
    replyPermission: (directory: string, id: string, reply: "once" | "always" | "reject", message?: string) =>
      client.json<boolean>("POST", `/permission/${enc(id)}/reply`, {
        ...q(directory),
        body: { reply, ...(message ? { message } : {}) },
      }),
    questions: (directory: string) => client.json<QuestionRequest[]>("GET", "/question", q(directory)),
    replyQuestion: (directory: string, id: string, answers: string[][]) =>
      client.json<boolean>("POST", `/question/${enc(id)}/reply`, { ...q(directory), body: { answers } }),
    rejectQuestion: (directory: string, id: string) =>
      client.json<boolean>("POST", `/question/${enc(id)}/reject`, q(directory)),
    agents: (directory: string) =>
      client.json<Array<{ name: string; mode?: string; description?: string; hidden?: boolean; builtIn?: boolean }>>(
        "GET",
        "/agent",
        q(directory),
      ),
    providers: (directory: string) =>
      client.json<{
        providers: Array<{
          id: string;
          name?: string;
          models?: Record<string, { id?: string; name?: string; limit?: { context?: number; output?: number } }>;
        }>;
        default?: Record<string, string>;
      }>("GET", "/config/providers", q(directory)),
    capabilities: (directory: string) =>
      client.json<Record<string, unknown>>("GET", "/experimental/capabilities", q(directory)),
  };
}

export type Api = ReturnType<typeof createApi>;
