// Process entry: config -> store -> planes -> listen. Exits non-zero with a readable message on bad config.
import fs from "node:fs";
import path from "node:path";
import { startBridge } from "./bridge.js";
import { ConfigError, loadConfig } from "./config.js";
import { createLogger } from "./log.js";
import { bridgeIsRoot } from "./sandbox/identity.js";

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
  const bridge = await startBridge(config, { log });
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

const invokedDirectly = process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href;
if (invokedDirectly) {
  main().catch((error: unknown) => {
    process.stderr.write(`urlbridge: failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
