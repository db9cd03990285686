// Projects and sessions: the operator's trust decisions, limits, and capability rotation.
// Changing a project's root or permissions (write, terminal, web) rotates only that project's sessions.
import fs from "node:fs";
import path from "node:path";
import { isToolListed } from "../kernel/tool/permissions.js";
import type { SessionStates } from "../kernel/tool/session-state.js";
import type { AnyToolDefinition, ProjectPermissions } from "../kernel/tool/definition.js";
import type { Store } from "../store/index.js";
import type { ProjectRow } from "../store/projects.js";
import type { SessionRow } from "../store/sessions.js";
import type { Reachability } from "../tunnel/reachability.js";
import { generateCapabilityToken, generateId } from "./capability-token.js";
import { ControlError, ControlErrorCode, controlMessage, notFound } from "./errors.js";
import type { WorktreeView } from "./worktrees/worktree-view.js";

export const MAX_ENABLED_SESSIONS = 16;
export const MAX_SESSION_DEFINITIONS = 64;

/** URL transport features every session generation gets, shown to the operator. */
export const TRANSPORT_FEATURES = [
  "raw-tail content (raw= last)",
  "~ escape grammar",
  "tolerant percent-decoding",
  "strict parameters with repair URLs",
  "response range replay (/z)",
] as const;

export type Permissions = ProjectPermissions;

export interface SessionView {
  id: string;
  projectId: string;
  name: string;
  enabled: boolean;
  generation: number;
  initUrl: string;
  /** Who can reach initUrl with the current public origin, and what to do when that is not everyone. */
  reachability: Reachability;
  /**
   * Tools this generation can call over URLs, given its project's permissions: kernel tool ids (the URL edge's
   * helpers, such as stage and result, among them), then plugin tools as MCP names them.
   */
  tools: string[];
  /**
   * Tools an MCP client of this session is offered (its tools/list on the capability the session's MCP view hands
   * out): MCP's names, which are not the URL edge's ids, and without the URL-only helpers (issue 32).
   */
  mcpTools: string[];
  features: string[];
  createdAt: number;
  /** What this session added to its project since the bridge started, against its growth budget (0: off). */
  growth?: { addedBytes: number; budgetBytes: number };
  /** The session's own git worktree, when it has one (issue 31; worktrees/worktree-view.ts). */
  worktree?: WorktreeView;
}

export interface RegistryOptions {
  store: Store;
  states: SessionStates;
  tools: AnyToolDefinition[];
  /**
   * Plugin tools as agents are offered them (named as on MCP, `<plugin>_<tool>`), so a session's tool list counts
   * what the agent can call (issue 32); a plugin that is not set up offers none.
   */
  pluginTools?: () => Array<{ name: string; enabled: (permissions: Permissions) => boolean }>;
  /** The MCP tool names a session with these permissions (and a worktree or not) is offered (mcp/tool-listing.ts listedSpecs). */
  mcpTools?: (permissions: Permissions, worktreeSession: boolean) => string[];
  publicOrigin: () => string;
  /** Who can reach a URL on that origin (server/tunnel/reachability.ts). */
  reachability: () => Reachability;
  /** A session's or project's capabilities ended (rotate, disable, delete): end the processes it started. */
  onScopeEnd?: (scope: { sessionId?: string; projectId?: string; projectDeleted?: boolean }) => void;
  /** The session's project growth so far (server/mutation/growth-budget.ts), shown on its card. */
  growthOf?: (sessionId: string) => { addedBytes: number; budgetBytes: number };
  /** The session's worktree as the operator sees it, or undefined when it has none (worktrees/worktree-sessions.ts). */
  worktreeOf?: (sessionId: string) => WorktreeView | undefined;
}

/** Resolves an operator-supplied root to its canonical realpath and checks it is a directory. */
export function canonicalRoot(root: string): string {
  if (!path.isAbsolute(root))
    throw new ControlError(ControlErrorCode.rootNotAbsolute, `Project root must be an absolute path; got "${root}".`);
  let real: string;
  try {
    real = fs.realpathSync(root);
  } catch {
    throw new ControlError(ControlErrorCode.rootNotFound, `Project root "${root}" does not exist.`);
  }
  if (!fs.statSync(real).isDirectory())
    throw new ControlError(ControlErrorCode.rootNotDirectory, `Project root "${root}" is not a directory.`);
  return real;
}

export function createRegistry(options: RegistryOptions) {
  const { store, states } = options;

  function mintTokens(sessionId: string, generation: number): void {
    const fresh = () => {
      for (;;) {
        const token = generateCapabilityToken();
        if (!store.sessions.tokenExists(token)) return token;
      }
    };
    store.sessions.replaceCapabilities(sessionId, generation, { init: fresh(), read: fresh(), mutation: fresh() });
  }

  function requireProject(id: string): ProjectRow {
    const p = store.projects.get(id);
    if (!p) throw notFound("project", id);
    return p;
  }

  function requireSession(id: string): SessionRow {
    const s = store.sessions.get(id);
    if (!s) throw notFound("session", id);
    return s;
  }

  function rotate(session: SessionRow): SessionRow {
    const next = { ...session, generation: session.generation + 1 };
    store.sessions.update(next);
    mintTokens(session.id, next.generation);
    states.forget(session.id);
    options.onScopeEnd?.({ sessionId: session.id });
    return next;
  }

  function effectiveTools(permissions: Permissions, worktreeSession: boolean): string[] {
    const native = options.tools.filter((t) => isToolListed(t, permissions, worktreeSession)).map((t) => t.id);
    const plugin = (options.pluginTools?.() ?? []).filter((t) => t.enabled(permissions)).map((t) => t.name);
    return [...native, ...plugin];
  }

  function view(session: SessionRow): SessionView {
    const project = requireProject(session.projectId);
    const caps = store.sessions.capabilitiesFor(session.id, session.generation);
    const worktree = options.worktreeOf?.(session.id);
    return {
      id: session.id,
      projectId: session.projectId,
      name: session.name,
      enabled: session.enabled,
      generation: session.generation,
      initUrl: `${options.publicOrigin()}/v0/init/${caps.init}`,
      reachability: options.reachability(),
      tools: effectiveTools(project.permissions, worktree !== undefined),
      mcpTools: options.mcpTools?.(project.permissions, worktree !== undefined) ?? [],
      features: [...TRANSPORT_FEATURES],
      createdAt: session.createdAt,
      ...(options.growthOf ? { growth: options.growthOf(session.id) } : {}),
      ...(worktree ? { worktree } : {}),
    };
  }

  return {
    listProjects: (): ProjectRow[] => store.projects.list(),
    getProject: requireProject,

    createProject(input: { name: string; root: string; permissions: Permissions }): ProjectRow {
      const root = canonicalRoot(input.root);
      return store.transaction(() => {
        if (store.projects.getByName(input.name))
          throw new ControlError(ControlErrorCode.projectNameTaken, controlMessage.projectNameTaken(input.name));
        const id = generateId("p");
        store.projects.insert({ id, name: input.name, root, ...input.permissions });
        return requireProject(id);
      });
    },

    /** Applies a partial update; returns the ids of sessions that were rotated. */
    updateProject(id: string, patch: { name?: string; root?: string; permissions?: Partial<Permissions> }) {
      const root = patch.root === undefined ? undefined : canonicalRoot(patch.root);
      return store.transaction(() => {
        const current = requireProject(id);
        if (patch.name && patch.name !== current.name && store.projects.getByName(patch.name)) {
          throw new ControlError(ControlErrorCode.projectNameTaken, controlMessage.projectNameTaken(patch.name));
        }
        const next = {
          id,
          name: patch.name ?? current.name,
          root: root ?? current.root,
          write: patch.permissions?.write ?? current.permissions.write,
          terminal: patch.permissions?.terminal ?? current.permissions.terminal,
          web: patch.permissions?.web ?? current.permissions.web,
        };
        const scopeChanged =
          next.root !== current.root ||
          next.write !== current.permissions.write ||
          next.terminal !== current.permissions.terminal ||
          next.web !== current.permissions.web;
        store.projects.update(next);
        const rotated = scopeChanged ? store.sessions.listByProject(id).map((s) => rotate(s).id) : [];
        return { project: requireProject(id), rotatedSessions: rotated };
      });
    },

    deleteProject(id: string): void {
      const sessions = store.sessions.listByProject(id);
      if (!store.projects.delete(id)) throw notFound("project", id);
      for (const s of sessions) states.forget(s.id);
      options.onScopeEnd?.({ projectId: id, projectDeleted: true });
    },

    listSessions: (): SessionView[] => store.sessions.list().map(view),
    getSession: (id: string): SessionView => view(requireSession(id)),

    /** The name a new session of the project gets when the operator gives none. */
    sessionNameFor(projectId: string, name?: string): string {
      const project = requireProject(projectId);
      return name ?? `${project.name}-${store.sessions.listByProject(project.id).length + 1}`;
    },

    /** `alongside` runs in the same transaction once the session row exists (a worktree session's own row). */
    createSession(
      input: { projectId: string; name?: string | undefined },
      alongside?: (session: { id: string; name: string; projectId: string }) => void,
    ): SessionView {
      return store.transaction(() => {
        const project = requireProject(input.projectId);
        if (store.sessions.count() >= MAX_SESSION_DEFINITIONS) {
          throw new ControlError(
            ControlErrorCode.sessionDefinitionLimitReached,
            controlMessage.sessionDefinitionLimit(MAX_SESSION_DEFINITIONS),
          );
        }
        if (store.sessions.countEnabled() >= MAX_ENABLED_SESSIONS) {
          throw new ControlError(
            ControlErrorCode.enabledSessionLimitReached,
            controlMessage.enabledSessionLimit(MAX_ENABLED_SESSIONS),
          );
        }
        const id = generateId("s");
        const name = input.name ?? `${project.name}-${store.sessions.listByProject(project.id).length + 1}`;
        store.sessions.insert({ id, projectId: project.id, name, enabled: true, generation: 1 });
        alongside?.({ id, name, projectId: project.id });
        mintTokens(id, 1);
        return view(requireSession(id));
      });
    },

    rotateSession(id: string): SessionView {
      return store.transaction(() => view(rotate(requireSession(id))));
    },

    enableSession(id: string): SessionView {
      return store.transaction(() => {
        const s = requireSession(id);
        if (s.enabled) return view(s);
        if (store.sessions.countEnabled() >= MAX_ENABLED_SESSIONS) {
          throw new ControlError(
            ControlErrorCode.enabledSessionLimitReached,
            controlMessage.enabledSessionLimit(MAX_ENABLED_SESSIONS),
          );
        }
        store.sessions.update({ ...s, enabled: true });
        return view(requireSession(id));
      });
    },

    disableSession(id: string): SessionView {
      return store.transaction(() => {
        const s = requireSession(id);
        store.sessions.update({ ...s, enabled: false });
        states.forget(id);
        options.onScopeEnd?.({ sessionId: id });
        return view(requireSession(id));
      });
    },

    /** Renames a session; its id, generation and URLs stay as they are (nothing the agent holds changes). */
    renameSession(id: string, name: string): SessionView {
      return store.transaction(() => {
        const s = requireSession(id);
        if (s.name !== name) store.sessions.update({ ...s, name });
        return view(requireSession(id));
      });
    },

    deleteSession(id: string): void {
      if (!store.sessions.delete(id)) throw notFound("session", id);
      states.forget(id);
      options.onScopeEnd?.({ sessionId: id });
    },

    /** URLBRIDGE_EPHEMERAL_CAPABILITIES=1: every session gets fresh tokens at start-up. */
    rotateAll(): void {
      store.transaction(() => {
        for (const s of store.sessions.list()) rotate(s);
      });
    },
  };
}

export type Registry = ReturnType<typeof createRegistry>;
