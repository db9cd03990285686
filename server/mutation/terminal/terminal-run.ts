// Runs one foreground terminal command through the sandbox launcher: closed stdin, bounded output, and a
// timeout that ends the whole tree. The launcher ends leftover processes when the shell exits (--foreground),
// so nothing the command started can hold its output, or its gate slot, past its end.
import { ErrorCode, ToolError } from "../../errors.js";
import { OutputCollector, STDERR_LIMITS, STDOUT_LIMITS, type BoundedText } from "./terminal-output.js";
import type { EndReason, TerminalProcesses, TreeOwner } from "./terminal-processes.js";
import { spawnerLost } from "./terminal-background.js";
import { spawnCommand, type SpawnedCommand, type SpawnOptions } from "./terminal-spawn.js";

export { resolveShell, type ShellInvocation, type SpawnOptions } from "./terminal-spawn.js";

/** Foreground timeout when timeout= is omitted. */
export const DEFAULT_TIMEOUT_MS = 120_000;
export const MIN_TIMEOUT_MS = 100;
/** Longest foreground run; longer work belongs in bg=1. */
export const MAX_TIMEOUT_MS = 600_000;

export interface ForegroundOptions extends SpawnOptions {
  timeoutMs: number;
  /** Aborting ends the tree (bridge shutdown). */
  signal?: AbortSignal;
  /** Called once the launcher has a pid, before the command can have done much: the place to checkpoint it. */
  onSpawn?: (pid: number) => void;
  /** Who started it: the registry ends it with its session or project. */
  owner?: TreeOwner;
  /** The bridge's registry of live trees (its MutationRuntime's), which the tree joins while it runs. */
  processes: TerminalProcesses;
}

export interface ForegroundResult {
  pid: number | undefined;
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  aborted: boolean;
  /** Ended because its session or project ended (disabled, rotated, deleted, terminal permission removed). */
  scopeEnded: boolean;
  durationMs: number;
  stdout: BoundedText;
  stderr: BoundedText;
  /** Processes the command left running after its shell exited, which were then ended. */
  leftoversKilled: number;
  /** Ended because its session passed an agent limit (memory or project growth budget). */
  limitEnded?: "memory" | "growth";
  /** The sandbox launcher refused to start the command; its reason. */
  launcherError: string | undefined;
  /** The resident spawner died under the command; the launcher ended its tree. */
  spawnerLost?: boolean;
}

export async function runForeground(options: ForegroundOptions): Promise<ForegroundResult> {
  const started = performance.now();
  const stdout = new OutputCollector(STDOUT_LIMITS);
  const stderr = new OutputCollector(STDERR_LIMITS);
  // Until the launcher has a pid, the registry holds a pending start that scope ends and shutdown reach.
  const pending = options.processes.begin("foreground", options.owner);
  let child: SpawnedCommand;
  try {
    child = await spawnCommand({ ...options, foreground: true });
  } catch (error) {
    pending.abandoned();
    throw error;
  }
  const pid = child.pid;
  if (pid === undefined) {
    pending.abandoned();
    if ((await child.done).spawnerLost) throw spawnerLost();
    throw new ToolError(
      ErrorCode.internalError,
      "The shell could not be started (spawn failed). Check that /bin/sh exists and the launcher is built (npm run build:native).",
      {
        retryable: false,
      },
    );
  }
  let ended: EndReason | "timeout" | undefined;
  const end = (why: EndReason | "timeout") => {
    ended ??= why;
    return child.stop();
  };
  const forget = pending.started({
    pid,
    kind: "foreground",
    owner: options.owner,
    command: options.command,
    cwd: options.cwd,
    startedAt: Date.now(),
    stop: (reason) => end(reason),
  });
  options.onSpawn?.(pid);
  child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk));
  child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
  const timer = setTimeout(() => void end("timeout"), options.timeoutMs);
  const onAbort = () => void end("shutdown");
  options.signal?.addEventListener("abort", onAbort, { once: true });
  if (options.signal?.aborted) onAbort();
  try {
    const result = await child.done;
    return {
      pid,
      exitCode: result.exitCode,
      signal: result.signal,
      timedOut: ended === "timeout",
      aborted: ended === "shutdown",
      scopeEnded: ended === "scope_ended" || ended === "stopped",
      durationMs: Math.round(performance.now() - started),
      stdout: stdout.render(),
      stderr: stderr.render(),
      leftoversKilled: ended ? 0 : result.leftovers,
      ...(ended === "memory" || ended === "growth" ? { limitEnded: ended } : {}),
      launcherError: result.launcherError,
      ...(result.spawnerLost ? { spawnerLost: true } : {}),
    };
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
    forget();
  }
}
