// The URLBRIDGE_* variables as zod reads them: each variable's accepted values and default (envSchema), the
// value parsers they share and the defaults they name. config.ts turns a parse into the Config object.
import path from "node:path";
import { z } from "zod";
import { allowEntryProblem, operatorTokenWeakness, parseTrustedProxy } from "./config-checks.js";

/** The search APIs' public endpoints, the defaults of URLBRIDGE_BRAVE_SEARCH_URL / URLBRIDGE_TAVILY_SEARCH_URL. */
export const BRAVE_SEARCH_URL = "https://api.search.brave.com/res/v1/web/search";
export const TAVILY_SEARCH_URL = "https://api.tavily.com/search";

const port = z.coerce.number().int().min(0).max(65535);
const flag = z
  .enum(["0", "1", "true", "false", "yes", "no", "on", "off", ""])
  .transform((v) => ["1", "true", "yes", "on"].includes(v));
const httpOrigin = z
  .string()
  .url()
  .refine((v) => /^https?:\/\//.test(v), "must start with http:// or https://")
  .transform((v) => v.replace(/\/+$/, ""));
const endpointUrl = z
  .string()
  .url()
  .refine((v) => /^https?:\/\//.test(v), "must start with http:// or https://");
/** A size in MiB, 0 meaning "no limit" for the agent limits. */
const mebibytes = z.coerce
  .number()
  .int("must be a whole number of MiB")
  .min(0, "must be 0 (off) or a positive number of MiB")
  .max(2 ** 40);

/** Per session: its terminal processes' memory plus the scratch tmpfs (server/mutation/terminal/memory-watchdog.ts). */
export const DEFAULT_AGENT_MEMORY_MB = 1024;
/** RLIMIT_FSIZE of every agent process: no single file it writes grows past this. */
export const DEFAULT_AGENT_MAX_FILE_MB = 1024;
/** Per session: what it may add to its project through the file tools and the terminal (server/mutation/growth-budget.ts). */
export const DEFAULT_SESSION_GROWTH_MB = 2048;

const hostList = z.string().transform((v) =>
  v
    .split(",")
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean),
);

/**
 * An http origin on loopback only (localhost, 127.0.0.1, [::1]; any port, no path, no credentials): the OpenCode
 * plugin sends a password there, so it must never be a name or address another machine answers for.
 */
const loopbackOrigin = z.string().transform((value, ctx) => {
  let parsed: URL | undefined;
  try {
    parsed = new URL(value);
  } catch {
    parsed = undefined;
  }
  const loopback =
    parsed && parsed.protocol === "http:" && ["localhost", "127.0.0.1", "[::1]"].includes(parsed.hostname);
  if (
    !parsed ||
    !loopback ||
    parsed.username ||
    parsed.password ||
    (parsed.pathname !== "/" && parsed.pathname !== "") ||
    parsed.search ||
    parsed.hash
  ) {
    ctx.addIssue({
      code: z.ZodIssueCode.custom,
      message:
        "must be an http origin on loopback: http://127.0.0.1:<port>, http://localhost:<port> or http://[::1]:<port>, with no path or credentials",
    });
    return z.NEVER;
  }
  return parsed.origin;
});

/** A Docker network or label value: letters, digits, _ . - (starting with a letter or digit). */
const dockerName = z
  .string()
  .regex(
    /^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,63}$/,
    "must be letters, digits, _ . - (at most 64, starting with a letter or digit)",
  );
/** "<absolute path in the bridge>=<absolute path on the host>", e.g. /projects=/home/me/code. */
const hostProjects = z.string().transform((value, ctx) => {
  const [from, to, extra] = value.split("=");
  if (!from || !to || extra !== undefined || !path.isAbsolute(from) || !path.isAbsolute(to)) {
    ctx.addIssue({
      code: z.ZodIssueCode.custom,
      message: "must be <absolute path in the bridge>=<absolute path on the host>, e.g. /projects=/home/me/code",
    });
    return z.NEVER;
  }
  return { from: path.resolve(from), to: path.resolve(to) };
});

export const envSchema = z.object({
  URLBRIDGE_STATE_DIR: z.string().min(1).optional(),
  // One host or several, comma-separated; names are resolved at start and every address is listened on.
  URLBRIDGE_CONTROL_HOST: hostList
    .refine((hosts) => hosts.length > 0, "must name at least one host")
    .default(["127.0.0.1"]),
  URLBRIDGE_CONTROL_PORT: port.default(47433),
  URLBRIDGE_DATA_HOST: z.string().min(1).default("127.0.0.1"),
  URLBRIDGE_DATA_PORT: port.default(47432),
  URLBRIDGE_PUBLIC_ORIGIN: httpOrigin.optional(),
  URLBRIDGE_OPERATOR_TOKEN: z
    .string()
    .superRefine((token, ctx) => {
      const weakness = operatorTokenWeakness(token);
      if (weakness) ctx.addIssue({ code: z.ZodIssueCode.custom, message: `too weak: ${weakness}` });
    })
    .optional(),
  URLBRIDGE_TUNNEL_METRICS: httpOrigin.optional(),
  URLBRIDGE_EPHEMERAL_CAPABILITIES: flag.default(false),
  URLBRIDGE_LOG_LEVEL: z.enum(["debug", "info", "warn", "error", "silent"]).default("info"),
  URLBRIDGE_BROWSE_ROOTS: z.string().optional(),
  URLBRIDGE_ALLOWED_HOSTS: hostList.default([]),
  URLBRIDGE_CLOUDFLARED: flag.default(false),
  // deploy/compose.local-data-plane.yaml sets it: the data plane is also published on the host's loopback.
  URLBRIDGE_DATA_PLANE_ON_HOST: flag.default(false),
  // compose.yaml passes its project name: the stdio snippets then name the container (`docker exec -i <project>-bridge-1`).
  URLBRIDGE_COMPOSE_PROJECT: z
    .string()
    .regex(/^[a-z0-9][a-z0-9_-]*$/, "must be a compose project name (a-z, 0-9, _ and -)")
    .optional(),
  URLBRIDGE_GREP_ENGINE: z.enum(["auto", "rg", "fallback"]).default("auto"),
  URLBRIDGE_SANDBOX: z.enum(["auto", "landlock", "container", "none"]).default("auto"),
  // server/sandbox/spawner.ts: "off" makes the bridge fork the launcher itself (the fallback path).
  URLBRIDGE_SPAWNER: z.enum(["auto", "off"]).default("auto"),
  URLBRIDGE_AGENT_UID: z.coerce
    .number()
    .int()
    .min(1, "must not be 0: the agent never runs as root")
    .max(2 ** 31 - 1)
    .default(1000),
  URLBRIDGE_AGENT_GID: z.coerce
    .number()
    .int()
    .min(1, "must not be 0: the agent never runs as root")
    .max(2 ** 31 - 1)
    .default(1000),
  URLBRIDGE_SCRATCH_DIR: z.string().min(1).optional(),
  // Worktree sessions (issue 31, server/control/worktrees/): where worktrees go, and how many one project may have.
  URLBRIDGE_WORKTREE_DIR: z.string().min(1).optional(),
  URLBRIDGE_MAX_WORKTREES_PER_PROJECT: z.coerce
    .number()
    .int()
    .min(1, "must be at least 1")
    .max(256, "must be at most 256")
    .default(8),
  // Agent limits (server/sandbox/agent-limits.ts, docs/SECURITY.md "Agent limits"); 0 turns one off.
  URLBRIDGE_AGENT_MEMORY_MB: mebibytes.default(DEFAULT_AGENT_MEMORY_MB),
  URLBRIDGE_AGENT_MAX_FILE_MB: mebibytes.default(DEFAULT_AGENT_MAX_FILE_MB),
  URLBRIDGE_SESSION_GROWTH_MB: mebibytes.default(DEFAULT_SESSION_GROWTH_MB),
  // pty=1 processes nobody typed into or looked at for this long are ended (server/mutation/terminal/pty/).
  URLBRIDGE_PTY_IDLE_MS: z.coerce.number().int().min(1000, "must be at least 1000 ms").optional(),
  // URLBRIDGE_SANDBOX=container only (server/sandbox/container/): the per-project sandbox containers.
  URLBRIDGE_SANDBOX_IMAGE: z.string().min(1).optional(),
  URLBRIDGE_SANDBOX_NETWORK: dockerName.default("none"),
  URLBRIDGE_SANDBOX_CPUS: z.coerce.number().positive("must be a positive number of CPUs").optional(),
  URLBRIDGE_SANDBOX_MEMORY_MB: z.coerce.number().int().positive("must be a positive whole number of MiB").optional(),
  URLBRIDGE_SANDBOX_PIDS: z.coerce.number().int().positive("must be a positive whole number").optional(),
  URLBRIDGE_SANDBOX_TMP_MB: z.coerce.number().int().positive("must be a positive whole number of MiB").optional(),
  URLBRIDGE_SANDBOX_HOST_PROJECTS: hostProjects.optional(),
  // Unset: the state directory's own name (store/sandbox-instance.ts), so two appliances on one engine never collide.
  URLBRIDGE_SANDBOX_INSTANCE: dockerName.optional(),
  URLBRIDGE_UNKNOWN_TOKEN_THROTTLE: flag.default(true),
  // Review and undo (server/review/): how long changed files' contents stay reviewable, and how much they may use.
  URLBRIDGE_REVIEW_RETENTION_DAYS: z.coerce.number().positive("must be a positive number of days").default(7),
  URLBRIDGE_REVIEW_MAX_MB: z.coerce.number().int().positive("must be a positive whole number of MiB").default(256),
  // Terminal checkpoints (server/review/checkpoint/): on/off, and the tree past which a command's changes are not recorded.
  URLBRIDGE_CHECKPOINTS: flag.default(true),
  URLBRIDGE_CHECKPOINT_MAX_FILES: z.coerce.number().int().positive("must be a positive whole number").default(20_000),
  URLBRIDGE_CHECKPOINT_MAX_MB: z.coerce.number().int().positive("must be a positive whole number of MiB").default(512),
  URLBRIDGE_TRUSTED_PROXIES: hostList
    .refine(
      (entries) => entries.every((e) => parseTrustedProxy(e) !== undefined),
      "must be comma-separated host names, IP addresses or CIDR ranges (e.g. tunnel, the tunnel's compose service)",
    )
    .default([]),
  // webfetch's guard (server/kernel/web/guard/): private hosts or ranges the operator lets it reach. Never by default.
  URLBRIDGE_WEB_ALLOW: hostList
    .superRefine((entries, ctx) => {
      for (const entry of entries) {
        const problem = allowEntryProblem(entry);
        if (problem)
          ctx.addIssue({
            code: z.ZodIssueCode.custom,
            message: `${problem}; give comma-separated host names, IP addresses or CIDR ranges (e.g. wiki.lan,10.1.2.0/24)`,
          });
      }
    })
    .default([]),
  // websearch's providers (server/kernel/web/search/): the first with a key answers, or the one named.
  URLBRIDGE_BRAVE_API_KEY: z.string().min(1).optional(),
  URLBRIDGE_TAVILY_API_KEY: z.string().min(1).optional(),
  URLBRIDGE_BRAVE_SEARCH_URL: endpointUrl.default(BRAVE_SEARCH_URL),
  URLBRIDGE_TAVILY_SEARCH_URL: endpointUrl.default(TAVILY_SEARCH_URL),
  URLBRIDGE_WEBSEARCH_PROVIDER: z.enum(["brave", "tavily"]).optional(),
  // The bundled OpenCode Control plugin (plugins/opencode-control/): a loopback OpenCode server, reached lazily.
  URLBRIDGE_OPENCODE_ENABLED: flag.default(true),
  URLBRIDGE_OPENCODE_URL: loopbackOrigin.default("http://127.0.0.1:4096"),
  URLBRIDGE_OPENCODE_USERNAME: z.string().min(1).max(128).default("opencode"),
  URLBRIDGE_OPENCODE_PASSWORD: z.string().min(1).max(1024).optional(),
  URLBRIDGE_OPENCODE_ALLOW_EXISTING: flag.default(true),
  URLBRIDGE_OPENCODE_ALLOW_NESTED: flag.default(false),
  URLBRIDGE_OPENCODE_MAX_WORKERS: z.coerce
    .number()
    .int()
    .min(1, "must be 1 to 16")
    .max(16, "must be 1 to 16")
    .default(8),
});
