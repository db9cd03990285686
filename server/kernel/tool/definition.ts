// The shape every tool shares, native or plugin: an id, a compact route, the capability it needs,
// a zod schema for its arguments, and an execute function that knows nothing about HTTP.
import type { z } from "zod";
import type { SegmentEdit } from "../../url-grammar/request-url.js";
import type { UrlBinding } from "../../url-grammar/bind.js";
import type { SessionState } from "./session-state.js";
import type { IntentHandle, JournalBehaviour } from "./journal-contract.js";

export type { IntentHandle, InterruptedIntent, JournalBehaviour } from "./journal-contract.js";

export type CapabilityBase = "r" | "m";

// A project's permissions are stored with the project (store/projects.ts); the tool contract names them.
export type { ProjectPermissions } from "../../store/projects.js";
import type { ProjectPermissions } from "../../store/projects.js";
import type { SessionWorktreeRow } from "../../store/worktrees.js";
export type { SessionWorktreeRow } from "../../store/worktrees.js";

export type ProjectPermission = keyof ProjectPermissions;

export interface ProjectScope {
  id: string;
  name: string;
  /** Canonical host path of the project root; a worktree session's own worktree folder (issue 31). */
  root: string;
  permissions: ProjectPermissions;
  /** Who files the file tools create belong to when the bridge is root and the root is root's (config.agentFallback). */
  agentFallback?: { uid: number; gid: number };
}

export interface SessionScope {
  id: string;
  name: string;
  generation: number;
}

/** Exact URLs a tool may hand back (next, repair, retry, poll...). */
export interface ExactUrls {
  to(base: CapabilityBase, route: string, params: Array<[string, string | number | boolean]>, raw?: string): string;
  /** The current request with deterministic corrections; undefined when the call did not arrive as a URL. */
  repair(edit: SegmentEdit): string | undefined;
}

export interface ToolContext {
  project: ProjectScope;
  session: SessionScope;
  state: SessionState;
  urls: ExactUrls;
  /** Aborted when the process is shutting down. */
  signal: AbortSignal;
  /** Set by the journal runner while a recorded intent executes (journal-contract.ts). */
  intent?: IntentHandle;
  /** The session's own git worktree (issue 31): then project.root is worktree.path. Undefined otherwise. */
  worktree?: SessionWorktreeRow | undefined;
}

export type ToolResult = { ok: true } & Record<string, unknown>;

/** A tool's declared success shape: a zod object whose `ok` is the literal true. */
export type OutputSchema = z.ZodType<ToolResult>;

export interface ToolDefinition<S extends z.ZodObject = z.ZodObject, O extends OutputSchema = OutputSchema> {
  id: string;
  /** Compact route letter, e.g. "r". */
  route: string;
  /** Long descriptive routes, accepted but not advertised. */
  longRoutes: string[];
  capability: "read" | "mutation";
  /** Project permission that must be on for this tool to exist. */
  permission?: ProjectPermission;
  /**
   * A mutation that changes no project file itself (a plugin's whose effect it bounds by the session's own
   * permissions, such as a read-only OpenCode worker): enabled for a session with neither write nor terminal.
   */
  openToReadOnly?: boolean;
  /**
   * Listed only to sessions with a worktree of their own (issue 31: git_commit), where it can work; a call from any
   * other session still reaches the tool, which refuses it with its own code (permissions.ts isToolListed).
   */
  worktreeOnly?: boolean;
  /** One line an agent reads in /manifest and MCP tool listings. */
  description: string;
  schema: S;
  /**
   * What a successful call answers, exported beside the tool: MCP publishes it as outputSchema, and execute's
   * return type is inferred from it, so a renamed or dropped field fails the build.
   */
  output: O;
  url: UrlBinding;
  /** Example suffix used in hints ("/r?path=src/app.ts"). */
  example: string;
  /** Mutation tools only: how the intent journal treats this tool (server/mutation/journal/journal-runner.ts). */
  journal?: JournalBehaviour;
  /** May answer synchronously when it never waits (read does): the gateway then skips a microtask round. */
  execute(args: z.infer<S>, ctx: ToolContext): z.infer<O> | Promise<z.infer<O>>;
}

export type AnyToolDefinition = ToolDefinition<z.ZodObject, OutputSchema>;

/**
 * Type-checks execute against the schema's inferred arguments and the declared output, then erases the schema
 * types so tools can share one list. Safe because every caller validates arguments with the same schema first.
 * The parameter is written as a (always true) conditional type on purpose: TypeScript then types execute's
 * returned literals against the output inferred from `output`, so `kind: "file"` stays the literal an enum
 * field needs; against a plain ToolDefinition<S, O> it sees only ToolResult's `unknown` and widens to string.
 */
export function defineTool<S extends z.ZodObject, O extends OutputSchema = OutputSchema>(
  definition: [O] extends [unknown] ? ToolDefinition<S, O> : never,
): AnyToolDefinition {
  return definition as unknown as AnyToolDefinition;
}
