// The operator's review and undo (control API, CLI, UI): the same kernel tools an agent calls, /c and /n, run in
// the session's name with the operator's authority (write on, whatever the project's permissions say), so a
// revert from the control plane is a journaled intent of that session like any other: once per run nonce,
// conflicts refused unless forced, all files or none.
import { randomBytes } from "node:crypto";
import type { AnyToolDefinition, ToolContext } from "../kernel/tool/definition.js";
import type { ToolKernel } from "../tool/run-tool.js";
import type { SessionStates } from "../kernel/tool/session-state.js";
import type { Store } from "../store/index.js";
import { toolContextFor, type AgentFallback } from "./call.js";

export interface OperatorReviewOptions {
  store: Store;
  kernel: ToolKernel;
  tools: AnyToolDefinition[];
  states: SessionStates;
  agentFallback: AgentFallback;
  signal: AbortSignal;
}

/** A tool's answer body as the kernel gives it: `{ok:true,...}` or `{ok:false, errorCode, repairHint, errorDetail}`. */
export type ReviewBody = Record<string, unknown> & { ok: boolean };

export interface OperatorReview {
  /** Runs changes (/c) for the session with `input` (intent, path, since, diff, offset, fingerprint, max); undefined: no such session. */
  changes(sessionId: string, input: Record<string, unknown>): Promise<ReviewBody | undefined>;
  /** Runs revert (/n) for the session; `run` names the attempt (a retry with the same one answers the recorded result). */
  revert(sessionId: string, input: Record<string, unknown>, run?: string): Promise<ReviewBody | undefined>;
}

export function createOperatorReview(options: OperatorReviewOptions): OperatorReview {
  const { store, kernel, states } = options;
  const tool = (id: string) => options.tools.find((t) => t.id === id)!;
  const contextFor = (sessionId: string): ToolContext | undefined => {
    const session = store.sessions.get(sessionId);
    const project = session && store.projects.get(session.projectId);
    if (!session || !project) return undefined;
    // A worktree session's changes are in its worktree (issue 31), as its agent's calls see them.
    const worktree = store.worktrees.get(sessionId);
    return toolContextFor({
      cap: {
        token: "",
        kind: "mutation",
        sessionId,
        generation: session.generation,
        sessionName: session.name,
        projectId: project.id,
        projectName: project.name,
        root: worktree?.path ?? project.root,
        permissions: { ...project.permissions, write: true },
        ...(worktree ? { worktree } : {}),
      },
      state: states.get(sessionId, session.generation),
      // The operator has no URL to follow: no next, repair or force URLs, only the fields.
      urls: { to: () => "", repair: () => undefined },
      agentFallback: options.agentFallback,
      signal: options.signal,
    });
  };
  const run = async (sessionId: string, id: string, input: Record<string, unknown>) => {
    const ctx = contextFor(sessionId);
    if (!ctx) return undefined;
    return (await kernel.run(tool(id), input, ctx)).body as ReviewBody;
  };
  return {
    changes: (sessionId, input) => run(sessionId, "changes", input),
    revert: (sessionId, input, nonce) =>
      run(sessionId, "revert", { ...input, run: nonce ?? `op${randomBytes(8).toString("hex")}`, wait: 20_000 }),
  };
}
