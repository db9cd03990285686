// What a plugin declares: tools with the same shape as native tools (id, read or mutation, zod input, output
// schema, journal behaviour, execute), minus the URL details the host supplies, plus an optional authority
// request. Plugins are called through /k (server/gateway/plugin-route.ts) and run by the same kernel runner.
import type { z } from "zod";
import type {
  JournalBehaviour,
  OutputSchema,
  ProjectPermission,
  ProjectPermissions,
  ToolContext,
} from "../kernel/tool/definition.js";

/**
 * What one plugin call may touch: the invoking session's canonical project root and permissions, or a
 * narrower version a plugin asked for. Derived fresh for every call; a plugin cannot widen it.
 */
export interface PluginCallAuthority {
  /** Canonical host path the call is confined to: the project root or a directory inside it. */
  readonly root: string;
  /** "/project/..." form of root, as agents see paths. */
  readonly display: string;
  readonly permissions: Readonly<ProjectPermissions>;
}

/** A narrower authority a plugin asks for: a directory inside the root, or fewer permissions. */
export interface AuthorityRequest {
  /** A directory inside the granted root ("/project/sub" or "sub"); omitted: the whole granted root. */
  root?: string;
  /** Permissions the call needs; asking for one the session lacks is refused, never granted. */
  permissions?: Partial<ProjectPermissions>;
}

/** A plugin tool's context: the native one, with ctx.project narrowed to the call's authority. */
export interface PluginToolContext extends ToolContext {
  authority: PluginCallAuthority;
}

export interface PluginToolDefinition<S extends z.ZodObject = z.ZodObject, O extends OutputSchema = OutputSchema> {
  /** Lowercase snake_case, unique within the plugin: the `tool=` of a /k call. */
  id: string;
  capability: "read" | "mutation";
  /** Project permission the tool always needs (as for native tools). */
  permission?: ProjectPermission;
  description: string;
  /** The arguments the raw= JSON object must satisfy. Must not declare wait, run or call (journal controls). */
  schema: S;
  output: O;
  /** Example arguments shown by /k?plugin=<id>. */
  example?: z.input<S>;
  /**
   * A tool whose actions differ in capability (capability must then be "read"): the arguments' `field` member names
   * the action, and the listed actions are mutations, run on the mutation base through the intent journal; every
   * other action is a read. The host hosts such a tool as two kernel definitions (hosted-tool.ts).
   */
  mutations?: { field: string; actions: readonly string[]; example?: z.input<S> };
  /**
   * Its mutations change no project file and the plugin bounds what they do by the call's permissions, so a session
   * with neither write nor terminal may run them: such a session then gets a mutation base (Init lists it).
   */
  openToReadOnly?: boolean;
  journal?: Omit<JournalBehaviour, "stagedContent">;
  /** Asks for a narrower authority for this call; a request wider than the session is refused. */
  authority?(args: z.infer<S>, granted: PluginCallAuthority): AuthorityRequest | undefined;
  execute(args: z.infer<S>, ctx: PluginToolContext): z.infer<O> | Promise<z.infer<O>>;
}

export type AnyPluginTool = PluginToolDefinition<z.ZodObject, OutputSchema>;

/** Type-checks execute against the schemas, then erases them so one plugin can list many tools. */
export function definePluginTool<S extends z.ZodObject, O extends OutputSchema = OutputSchema>(
  definition: PluginToolDefinition<S, O>,
): AnyPluginTool {
  return definition as unknown as AnyPluginTool;
}

export interface PluginStatus {
  state:
    | "ready"
    | "disconnected"
    | "needs-auth"
    | "disabled"
    | "error"
    | "not-running"
    | "instance-changed"
    | "not-configured";
  detail?: string;
  /** A plugin that talks to a service: where it is and how far the last contact got (never credentials). */
  connection?: PluginConnection;
}

export interface PluginConnection {
  url: string;
  /** What the service asks for: none (it answered without credentials) or basic (HTTP Basic). */
  auth?: "none" | "basic";
  credentials: "configured" | "missing";
  version?: string;
  /** Short fingerprint of the service instance the plugin pinned. */
  instance?: string;
  /** ms epoch of the contact this status comes from. */
  checkedAt?: number;
}

export interface Plugin {
  /** Lowercase, digits and dashes: the `plugin=` of a /k call. */
  id: string;
  title: string;
  description: string;
  tools: AnyPluginTool[];
  status(): Promise<PluginStatus>;
  /**
   * Set when the plugin is installed but not set up: what it needs, in words an operator can act on here. The host
   * then offers none of its tools (an agent is never offered a tool that cannot run) and reports it not configured.
   */
  unconfigured?: string;
}
