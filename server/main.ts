// Process entry: config -> store -> planes -> listen. Exits non-zero with a readable message on bad config.
import fs from "node:fs";
import path from "node:path";
import { createOpenCodePlugin } from "../plugins/opencode-control/index.js";
import { startBridge } from "./bridge.js";
import { runningInAppliance } from "./control/session-mcp.js";
import { ConfigError, loadConfig } from "./config.js";
import { createLogger, type Logger } from "./log.js";
import { bridgeIsRoot } from "./sandbox/identity.js";
import { isStoreUnavailable } from "./store/health.js";
import { isEntryPoint } from "./entry-point.js";

/** URLBRIDGE_* names that carry a secret: parsed into the config once, then dropped from process.env. */
const SECRET_VARIABLE = /^URLBRIDGE_.*(TOKEN|SECRET|PASSWORD|KEY)/;

/**
 * Removes secrets from process.env so nothing later (a child spawned with process.env, a crash dump) carries
 * them. The kernel's copy in /proc/<pid>/environ keeps the initial block; uid separation and Landlock's
 * ptrace rule keep terminal commands from reading it (docs/SECURITY.md, Terminal isolation).
 */
export function dropSecretsFromEnvironment(env: NodeJS.ProcessEnv = process.env): string[] {
  const dropped = Object.keys(env).filter((name) => SECRET_VARIABLE.test(name));
  for (const name of dropped) delete env[name];
  return dropped;
}

/**
 * As root (the appliance): the state dir is root:root 0700 and everything in it root-owned and not readable
 * by others, also when the volume comes from the earlier layout where the bridge ran as uid 1000.
 */
export function secureStateDir(stateDir: string): void {
  if (!bridgeIsRoot() || !fs.existsSync(stateDir)) return;
  const walk = (p: string, depth: number) => {
    const stat = fs.lstatSync(p);
    if (stat.isSymbolicLink()) return;
    if (stat.uid !== 0 || stat.gid !== 0) fs.chownSync(p, 0, 0);
    if (stat.isDirectory()) {
      if ((stat.mode & 0o777) !== 0o700) fs.chmodSync(p, 0o700);
      if (depth < 4) for (const name of fs.readdirSync(p)) walk(path.join(p, name), depth + 1);
    } else if ((stat.mode & 0o077) !== 0) {
      fs.chmodSync(p, stat.mode & 0o700);
    }
  };
  walk(stateDir, 0);
}

/** Exit code after an unexpected fault (EX_SOFTWARE); compose's `restart: unless-stopped` starts a clean process. */
export const FAULT_EXIT_CODE = 70;
/** How long a faulted process may spend closing (intents recording, the store flushing) before it exits anyway. */
const FAULT_CLOSE_MS = 3000;
/** Errors of a client connection that went away mid-answer: that request is lost, nothing else is. */
const CLIENT_GONE = new Set([
  "EPIPE",
  "ECONNRESET",
  "ECONNABORTED",
  "ERR_STREAM_PREMATURE_CLOSE",
  "ERR_STREAM_DESTROYED",
]);

export type FaultVerdict = { action: "continue" | "exit"; reason: string };

/**
 * Whether the process may keep serving after an error nothing handled. Only two kinds are known to leave every
 * invariant intact: a state store refusing a write (the journal refuses mutations and the activity log buffers
 * until it recovers, docs/RELIABILITY.md) and a client socket that closed. Anything else may have stopped code
 * half-way through a change to in-memory state, so the process exits and is restarted clean.
 */
export function judgeFault(error: unknown): FaultVerdict {
  if (isStoreUnavailable(error)) {
    return {
      action: "continue",
      reason:
        "the state store refused a write (disk full, locked or I/O); mutations are refused retryably until it recovers",
    };
  }
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "string" && CLIENT_GONE.has(code))
    return { action: "continue", reason: "a client connection closed mid-answer" };
  return {
    action: "exit",
    reason: "an unexpected error escaped every handler, so the process state cannot be trusted",
  };
}

/** Logs faults that are safe to serve through; on any other, says so on stderr, closes within a bound and exits 70. */
export function installFaultHandlers(log: Logger, close: () => Promise<void>): void {
  let exiting = false;
  const handle = (kind: string) => (error: unknown) => {
    const verdict = judgeFault(error);
    const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
    if (verdict.action === "continue") {
      log.error(`${kind}, serving on: ${verdict.reason}`, { error: detail });
      return;
    }
    if (exiting) return;
    exiting = true;
    process.stderr.write(
      `urlbridge: fatal ${kind}: ${detail}\n` +
        `urlbridge: exiting with code ${FAULT_EXIT_CODE} because ${verdict.reason}. A supervisor restarts it (compose: restart: unless-stopped); ` +
        "intents that were running are settled by start-up recovery and never run twice. Report the error above if it repeats.\n",
    );
    setTimeout(() => process.exit(FAULT_EXIT_CODE), FAULT_CLOSE_MS).unref();
    Promise.resolve()
      .then(close)
      .catch(() => undefined)
      .finally(() => process.exit(FAULT_EXIT_CODE));
  };
  process.on("uncaughtException", handle("uncaught exception"));
  process.on("unhandledRejection", handle("unhandled rejection"));
}

export async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`urlbridge: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  dropSecretsFromEnvironment();
  const log = createLogger(config.logLevel);
  secureStateDir(config.stateDir);
  let closeBridge: () => Promise<void> = async () => undefined;
  installFaultHandlers(log, () => closeBridge());
  // Bundled plugins (plugins/): OpenCode Control unless URLBRIDGE_OPENCODE_ENABLED=false. It connects lazily.
  const { enabled: opencodeEnabled, ...opencode } = config.opencode;
  const plugins = opencodeEnabled
    ? [createOpenCodePlugin(opencode, { inAppliance: runningInAppliance(config.stateDir) })]
    : [];
  const bridge = await startBridge(config, { log, plugins });
  closeBridge = () => bridge.close();
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info(`received ${signal}; shutting down`);
    void bridge.close().then(() => process.exit(0));
    setTimeout(() => process.exit(1), 10_000).unref();
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
}

const invokedDirectly = isEntryPoint(import.meta.url);
if (invokedDirectly) {
  main().catch((error: unknown) => {
    process.stderr.write(`urlbridge: failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
