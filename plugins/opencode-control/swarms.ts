// Swarms: a durable batch handle over independent workers, not a scheduler. A swarm is a urlbridge-tagged OpenCode
// session whose children are its workers, so it survives a urlbridge restart with nothing stored here; waiting
// on it waits on each member's current prompt, by exact identity.
import { setTimeout as sleep } from "node:timers/promises";
import { ErrorCode, ToolError } from "../../server/errors.js";
import { type SessionInfo, urlbridgeMetaOf } from "./api.js";
import { assertCovers } from "./authority.js";
import { type Call, readUrl, visibleWorker } from "./call.js";
import { ascendingMessageId } from "./ids.js";
import { latestPrompt, readTurn, TERMINAL_STATES, type Turn } from "./turns.js";
import { WAIT_POLL_MS } from "./settings.js";
import {
  abortSession,
  admitPrompt,
  assertCapacity,
  assertIdle,
  createWorker,
  type PromptInput,
  type WorkerHandle,
  workerView,
} from "./workers.js";

export async function startSwarm(
  call: Call,
  title: string | undefined,
  members: Array<PromptInput & { title?: string | undefined }>,
): Promise<{ swarmId: string; workers: WorkerHandle[] }> {
  const workers: WorkerHandle[] = [];
  // Capacity is checked for the whole batch: a swarm is admitted whole or not at all.
  await assertCapacity(call, members.length);
  const swarm = await call.api.createSession(call.root, {
    title: title ?? `urlbridge swarm of ${members.length}`,
    metadata: { urlbridge: { kind: "swarm", ...(call.ctx.intent ? { callId: call.ctx.intent.callId } : {}) } },
  });
  for (const member of members)
    workers.push(await createWorker(call, member, { parentId: swarm.id, swarm: swarm.id, title: member.title }, true));
  return { swarmId: swarm.id, workers };
}

async function membersOf(call: Call, swarm: SessionInfo): Promise<SessionInfo[]> {
  const children = await call.api.children(swarm.directory, swarm.id);
  return children.filter((c) => urlbridgeMetaOf(c)?.kind === "worker");
}

export interface MemberState {
  session: SessionInfo;
  messageId: string | undefined;
  turn: Turn;
}

async function memberStates(call: Call, members: SessionInfo[]): Promise<MemberState[]> {
  return Promise.all(
    members.map(async (session) => {
      const messageId = latestPrompt(await call.api.messages(session.directory, session.id));
      const turn: Turn = messageId
        ? await readTurn(call.api, session.directory, session.id, messageId)
        : { state: "not-admitted" };
      return { session, messageId, turn };
    }),
  );
}

export function swarmView(call: Call, swarmId: string, states: MemberState[]) {
  const counts: Record<string, number> = {};
  for (const s of states) counts[s.turn.state] = (counts[s.turn.state] ?? 0) + 1;
  const done = states.every((s) => TERMINAL_STATES.has(s.turn.state));
  return {
    swarmId,
    done,
    counts,
    workers: states.map((s) =>
      s.messageId
        ? workerView(call, s.session.id, s.messageId, s.turn)
        : { sessionId: s.session.id, state: s.turn.state },
    ),
    ...(done ? {} : { poll: readUrl(call, "opencode_worker", { action: "swarm_wait", swarmId }) }),
  };
}

export async function readSwarm(call: Call, swarmId: string): Promise<{ swarm: SessionInfo; states: MemberState[] }> {
  const swarm = await visibleWorker(call, swarmId, "swarm");
  return { swarm, states: await memberStates(call, await membersOf(call, swarm)) };
}

export async function waitSwarm(call: Call, swarmId: string, timeoutMs: number): Promise<MemberState[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { states } = await readSwarm(call, swarmId);
    const settled = states.every((s) => TERMINAL_STATES.has(s.turn.state) || s.turn.state === "blocked");
    if (settled || Date.now() >= deadline || call.ctx.signal.aborted) return states;
    await sleep(Math.min(WAIT_POLL_MS * 2, Math.max(0, deadline - Date.now())));
  }
}

/** The same follow-up to every member; refused whole when any member is still busy. */
export async function continueSwarm(
  call: Call,
  swarmId: string,
  input: PromptInput,
): Promise<{ swarmId: string; workers: WorkerHandle[] }> {
  const swarm = await visibleWorker(call, swarmId, "swarm");
  const members = await membersOf(call, swarm);
  if (members.length === 0)
    throw new ToolError(ErrorCode.opencodeNotFound, `Swarm ${swarmId} has no workers.`, { detail: { swarmId } });
  for (const m of members) {
    assertCovers(call.ctx.authority, urlbridgeMetaOf(m)?.grant, "A worker of this swarm");
    await assertIdle(call, m);
  }
  const workers: WorkerHandle[] = [];
  for (const m of members) {
    const messageId = ascendingMessageId();
    const admission = await admitPrompt(call, m.directory, m.id, messageId, input);
    workers.push({
      sessionId: m.id,
      messageId,
      admission,
      waitUrl: readUrl(call, "opencode_worker", { action: "wait", sessionId: m.id, messageId }),
    });
  }
  return { swarmId, workers };
}

export async function cancelSwarm(call: Call, swarmId: string) {
  const swarm = await visibleWorker(call, swarmId, "swarm");
  const members = await membersOf(call, swarm);
  const results = await Promise.all(members.map(async (m) => ({ sessionId: m.id, ...(await abortSession(call, m)) })));
  return { swarmId, workers: results };
}
