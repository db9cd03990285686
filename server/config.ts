// Every URLBRIDGE_* variable, parsed once with zod at start-up (the schema: config-env.ts) into the Config object.
// A bad value stops the process with a message that names the variable and what it accepts.
import os from "node:os";
import path from "node:path";
import { envSchema } from "./config-env.js";

export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";

export interface Config {
  stateDir: string;
  /** `host` is the first of `hosts`: the address local clients (CLI, healthcheck) use. */
  control: { host: string; hosts: string[]; port: number };
  data: { host: string; port: number };
  publicOrigin: string | undefined;
  operatorToken: string | undefined;
  tunnelMetrics: string | undefined;
  ephemeralCapabilities: boolean;
  logLevel: LogLevel;
  /** Where the control plane's folder browser starts. */
  browseRoots: string[];
  /** Extra Host header names the control plane accepts besides loopback names. */
  allowedHosts: string[];
  /** The appliance publishes the data plane on the host's loopback too, so its local origin reaches the host. */
  dataPlaneOnHost: boolean;
  /** The compose project the appliance runs in (URLBRIDGE_COMPOSE_PROJECT), when compose.yaml says. */
  composeProject: string | undefined;
  /** Outside Docker: spawn a cloudflared quick tunnel if the binary is on PATH. */
  spawnCloudflared: boolean;
  /** /g engine: ripgrep when on PATH (auto), always rg, or always the portable fallback. */
  grepEngine: "auto" | "rg" | "fallback";
  /** How terminal commands (and ripgrep) are confined: server/sandbox/. "auto" picks landlock when the kernel has it. */
  sandbox: "auto" | "landlock" | "container" | "none";
  /** Whether a resident spawner forks the sandbox launcher ("auto", when built) or the bridge forks it ("off"). */
  spawner: "auto" | "off";
  /** Identity for agent processes and new files when the bridge runs as root and the project root is root-owned. */
  agentFallback: { uid: number; gid: number };
  /** Per-project scratch space (HOME, TMPDIR) for terminal commands, outside every project and the state dir. */
  scratchDir: string;
  /** URLBRIDGE_SANDBOX=container: what the per-project sandbox containers look like (server/sandbox/container/). */
  sandboxContainer: SandboxContainerConfig;
  /**
   * Worktree sessions (server/control/worktrees/): the folder worktrees go in (undefined: beside each project's
   * root, see worktree-layout.ts) and how many one project may have at once.
   */
  worktrees: { dir: string | undefined; maxPerProject: number };
  /** What one session's agent may use (server/sandbox/agent-limits.ts); each 0 when the operator turned it off. */
  agentLimits: AgentLimitsConfig;
  /** URLBRIDGE_PTY_IDLE_MS: when an untouched pty=1 process is ended; undefined: DEFAULT_PTY_IDLE_MS. */
  ptyIdleMs: number | undefined;
  /** Hold the data plane's opaque 404s for a source that sends many unknown tokens (gateway/unknown-token-throttle.ts). */
  unknownTokenThrottle: boolean;
  /** How long changed files' contents stay reviewable and how many bytes they may use (server/review/). */
  review: { retentionMs: number; maxBytes: number };
  /** Checkpoints around terminal commands: their budget and the folder of their caches (<state>/checkpoints). */
  checkpoints: { enabled: boolean; maxFiles: number; maxBytes: number; dir: string };
  /** Peers whose cf-connecting-ip header names the real client (the tunnel's network); see gateway/request-source.ts. */
  trustedProxies: string[];
  /** webfetch and websearch (server/kernel/web/), for projects with the web permission. */
  web: WebConfig;
  /** The bundled OpenCode Control plugin (plugins/opencode-control/settings.ts). */
  opencode: OpenCodeConfig;
}

export interface AgentLimitsConfig {
  /** URLBRIDGE_AGENT_MEMORY_MB: a session's terminal processes plus the scratch tmpfs, past which they are ended. */
  memoryBytes: number;
  /** URLBRIDGE_AGENT_MAX_FILE_MB: RLIMIT_FSIZE of agent processes. */
  maxFileBytes: number;
  /** URLBRIDGE_SESSION_GROWTH_MB: what a session may add to its project (file tools and terminal). */
  growthBytes: number;
}

export interface OpenCodeConfig {
  enabled: boolean;
  /**
   * The operator set it up (URLBRIDGE_OPENCODE_PASSWORD, _URL or _ENABLED given): its tools are offered. Otherwise the
   * plugin is listed as not configured and offers agents none of its tools (issue 32: none that cannot run).
   */
  configured: boolean;
  /** Loopback origin of `opencode serve`. */
  url: string;
  username: string;
  /** OpenCode's server password (Basic auth); never logged, never put in a URL. */
  password: string | undefined;
  allowExisting: boolean;
  allowNested: boolean;
  maxWorkers: number;
}

export interface WebConfig {
  /** URLBRIDGE_WEB_ALLOW: host names, addresses and CIDR ranges webfetch may reach although private. */
  allow: string[];
  search: WebSearchSettings;
}

/** Each search provider's key and endpoint, and which to prefer when both have keys (the web kernel's WebSearchConfig). */
export interface WebSearchSettings {
  brave: { key: string; url: string } | undefined;
  tavily: { key: string; url: string } | undefined;
  prefer: "brave" | "tavily" | undefined;
}

export interface SandboxContainerConfig {
  /** URLBRIDGE_SANDBOX_IMAGE; default node:20-bookworm-slim. Needs sh and coreutils. */
  image: string | undefined;
  /** URLBRIDGE_SANDBOX_NETWORK: "none" (no network) or a Docker network the operator allows. */
  network: string;
  cpus: number | undefined;
  memoryMb: number | undefined;
  pids: number | undefined;
  tmpMb: number | undefined;
  /** URLBRIDGE_SANDBOX_HOST_PROJECTS: where the bridge's projects folder is on the Docker host. */
  hostProjects: { from: string; to: string } | undefined;
  /**
   * URLBRIDGE_SANDBOX_INSTANCE: tells apart bridges sharing one Docker engine. Unset: bridge.ts fills in the state
   * directory's own (store/sandbox-instance.ts).
   */
  instance: string | undefined;
}

const MIB = 1024 * 1024;

export class ConfigError extends Error {
  override name = "ConfigError";
}

const homeOf = (env: NodeJS.ProcessEnv) => (env.HOME && env.HOME.length > 0 ? env.HOME : os.homedir());

export function defaultStateDir(env: NodeJS.ProcessEnv): string {
  const xdg = env.XDG_STATE_HOME;
  return path.join(xdg && xdg.length > 0 ? xdg : path.join(homeOf(env), ".local", "state"), "urlbridge");
}

/** Parses the environment; throws ConfigError naming every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const picked: Record<string, string> = {};
  for (const key of Object.keys(envSchema.shape)) {
    const value = env[key];
    if (value !== undefined && value !== "") picked[key] = value;
  }
  // Parsed once per process: zod's compiled fast path for an object (new Function) costs more to build than it saves.
  const parsed = envSchema.safeParse(picked, { jitless: true });
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => {
      const name = String(issue.path[0] ?? "environment");
      return `${name}: ${issue.message} (got ${JSON.stringify(redactIfSecret(name, picked[name]))})`;
    });
    throw new ConfigError(`Invalid configuration:\n  ${lines.join("\n  ")}`);
  }
  const e = parsed.data;
  const browseRoots = (e.URLBRIDGE_BROWSE_ROOTS ?? homeOf(env))
    .split(path.delimiter)
    .map((p) => p.trim())
    .filter(Boolean)
    .map((p) => path.resolve(p));
  return {
    stateDir: path.resolve(e.URLBRIDGE_STATE_DIR ?? defaultStateDir(env)),
    control: { host: e.URLBRIDGE_CONTROL_HOST[0]!, hosts: e.URLBRIDGE_CONTROL_HOST, port: e.URLBRIDGE_CONTROL_PORT },
    data: { host: e.URLBRIDGE_DATA_HOST, port: e.URLBRIDGE_DATA_PORT },
    publicOrigin: e.URLBRIDGE_PUBLIC_ORIGIN,
    operatorToken: e.URLBRIDGE_OPERATOR_TOKEN,
    tunnelMetrics: e.URLBRIDGE_TUNNEL_METRICS,
    ephemeralCapabilities: e.URLBRIDGE_EPHEMERAL_CAPABILITIES,
    logLevel: e.URLBRIDGE_LOG_LEVEL,
    browseRoots,
    allowedHosts: e.URLBRIDGE_ALLOWED_HOSTS,
    spawnCloudflared: e.URLBRIDGE_CLOUDFLARED,
    dataPlaneOnHost: e.URLBRIDGE_DATA_PLANE_ON_HOST,
    composeProject: e.URLBRIDGE_COMPOSE_PROJECT,
    grepEngine: e.URLBRIDGE_GREP_ENGINE,
    sandbox: e.URLBRIDGE_SANDBOX,
    spawner: e.URLBRIDGE_SPAWNER,
    agentFallback: { uid: e.URLBRIDGE_AGENT_UID, gid: e.URLBRIDGE_AGENT_GID },
    trustedProxies: e.URLBRIDGE_TRUSTED_PROXIES,
    unknownTokenThrottle: e.URLBRIDGE_UNKNOWN_TOKEN_THROTTLE,
    review: {
      retentionMs: Math.round(e.URLBRIDGE_REVIEW_RETENTION_DAYS * 24 * 60 * 60 * 1000),
      maxBytes: e.URLBRIDGE_REVIEW_MAX_MB * 1024 * 1024,
    },
    checkpoints: {
      enabled: e.URLBRIDGE_CHECKPOINTS,
      maxFiles: e.URLBRIDGE_CHECKPOINT_MAX_FILES,
      maxBytes: e.URLBRIDGE_CHECKPOINT_MAX_MB * 1024 * 1024,
      dir: path.join(path.resolve(e.URLBRIDGE_STATE_DIR ?? defaultStateDir(env)), "checkpoints"),
    },
    web: {
      allow: e.URLBRIDGE_WEB_ALLOW,
      search: {
        brave: e.URLBRIDGE_BRAVE_API_KEY
          ? { key: e.URLBRIDGE_BRAVE_API_KEY, url: e.URLBRIDGE_BRAVE_SEARCH_URL }
          : undefined,
        tavily: e.URLBRIDGE_TAVILY_API_KEY
          ? { key: e.URLBRIDGE_TAVILY_API_KEY, url: e.URLBRIDGE_TAVILY_SEARCH_URL }
          : undefined,
        prefer: e.URLBRIDGE_WEBSEARCH_PROVIDER,
      },
    },
    ptyIdleMs: e.URLBRIDGE_PTY_IDLE_MS,
    worktrees: {
      dir: e.URLBRIDGE_WORKTREE_DIR === undefined ? undefined : path.resolve(e.URLBRIDGE_WORKTREE_DIR),
      maxPerProject: e.URLBRIDGE_MAX_WORKTREES_PER_PROJECT,
    },
    sandboxContainer: {
      image: e.URLBRIDGE_SANDBOX_IMAGE,
      network: e.URLBRIDGE_SANDBOX_NETWORK,
      cpus: e.URLBRIDGE_SANDBOX_CPUS,
      memoryMb: e.URLBRIDGE_SANDBOX_MEMORY_MB,
      pids: e.URLBRIDGE_SANDBOX_PIDS,
      tmpMb: e.URLBRIDGE_SANDBOX_TMP_MB,
      hostProjects: e.URLBRIDGE_SANDBOX_HOST_PROJECTS,
      instance: e.URLBRIDGE_SANDBOX_INSTANCE,
    },
    agentLimits: {
      memoryBytes: e.URLBRIDGE_AGENT_MEMORY_MB * MIB,
      maxFileBytes: e.URLBRIDGE_AGENT_MAX_FILE_MB * MIB,
      growthBytes: e.URLBRIDGE_SESSION_GROWTH_MB * MIB,
    },
    opencode: {
      enabled: e.URLBRIDGE_OPENCODE_ENABLED,
      configured: ["URLBRIDGE_OPENCODE_PASSWORD", "URLBRIDGE_OPENCODE_URL", "URLBRIDGE_OPENCODE_ENABLED"].some(
        (key) => picked[key] !== undefined,
      ),
      url: e.URLBRIDGE_OPENCODE_URL,
      username: e.URLBRIDGE_OPENCODE_USERNAME,
      password: e.URLBRIDGE_OPENCODE_PASSWORD,
      allowExisting: e.URLBRIDGE_OPENCODE_ALLOW_EXISTING,
      allowNested: e.URLBRIDGE_OPENCODE_ALLOW_NESTED,
      maxWorkers: e.URLBRIDGE_OPENCODE_MAX_WORKERS,
    },
    scratchDir: path.resolve(
      e.URLBRIDGE_SCRATCH_DIR ??
        path.join(os.tmpdir(), `urlbridge-scratch-${typeof process.getuid === "function" ? process.getuid() : "user"}`),
    ),
  };
}

function redactIfSecret(name: string, value: string | undefined): string | undefined {
  return /TOKEN|SECRET|PASSWORD|KEY/.test(name) && value ? "<redacted>" : value;
}
