// Runs one foreground terminal command with execa: its own process group, scrubbed environment, closed stdin,
// bounded output, and a timeout that ends the whole tree. Leftover background jobs die with the command.
import fs from "node:fs";
import { execa } from "execa";
import { ErrorCode, ToolError } from "../errors.js";
import { killTree, listTree } from "./process-tree.js";
import { OutputCollector, STDERR_LIMITS, STDOUT_LIMITS, type BoundedText } from "./terminal-output.js";

/** Foreground timeout when timeout= is omitted. */
export const DEFAULT_TIMEOUT_MS = 120_000;
export const MIN_TIMEOUT_MS = 100;
/** Longest foreground run; longer work belongs in bg=1. */
export const MAX_TIMEOUT_MS = 600_000;

export interface ShellInvocation {
  file: string;
  /** Arguments that precede the command text. */
  args: string[];
}

/**
 * bash when present, else POSIX sh. Not a login shell (-l): profile files could re-export the credentials
 * the environment scrub removed, and they make start-up slower and machine-dependent.
 */
export function resolveShell(): ShellInvocation {
  for (const file of ["/bin/bash", "/usr/bin/bash"]) if (fs.existsSync(file)) return { file, args: ["-c"] };
  return { file: "/bin/sh", args: ["-c"] };
}

export interface SpawnOptions {
  command: string;
  cwd: string;
  env: Record<string, string>;
}

/** The one way terminal children are spawned: group leader (detached), no stdin, raw byte pipes, no buffering. */
export function spawnCommand(options: SpawnOptions) {
  const shell = resolveShell();
  return execa(shell.file, [...shell.args, options.command], {
    cwd: options.cwd,
    env: options.env,
    extendEnv: false,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    encoding: "buffer",
    buffer: false,
    reject: false,
    detached: true,
    cleanup: false,
    windowsHide: true,
  } as const);
}

export type SpawnedCommand = ReturnType<typeof spawnCommand>;

export interface ForegroundOptions extends SpawnOptions {
  timeoutMs: number;
  /** Aborting ends the tree (bridge shutdown). */
  signal?: AbortSignal;
  /** Called once the shell has a pid, before it can have done much: the place to checkpoint it. */
  onSpawn?: (pid: number) => void;
}

export interface ForegroundResult {
  pid: number | undefined;
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  aborted: boolean;
  durationMs: number;
  stdout: BoundedText;
  stderr: BoundedText;
  /** Processes the command left running after its shell exited, which were then ended. */
  leftoversKilled: number;
}

export async function runForeground(options: ForegroundOptions): Promise<ForegroundResult> {
  const started = performance.now();
  const stdout = new OutputCollector(STDOUT_LIMITS);
  const stderr = new OutputCollector(STDERR_LIMITS);
  const child = spawnCommand(options);
  const pid = child.pid;
  if (pid !== undefined) options.onSpawn?.(pid);
  child.stdout?.on("data", (chunk: Buffer) => stdout.push(chunk));
  child.stderr?.on("data", (chunk: Buffer) => stderr.push(chunk));

  let timedOut = false;
  let aborted = false;
  let leftoversKilled = 0;
  const kills: Array<Promise<unknown>> = [];
  const end = () => {
    if (pid !== undefined) kills.push(killTree(pid));
  };
  const timer = setTimeout(() => {
    timedOut = true;
    end();
  }, options.timeoutMs);
  const onAbort = () => {
    aborted = true;
    end();
  };
  options.signal?.addEventListener("abort", onAbort, { once: true });
  // The shell has exited: anything still in its group is a leftover background job holding our slot (and
  // often our pipes, which would keep the result from ever completing).
  child.once("exit", () => {
    if (pid === undefined || timedOut || aborted) return;
    const leftovers = listTree(pid).filter((p) => p !== pid);
    if (leftovers.length === 0) return;
    leftoversKilled = leftovers.length;
    end();
  });

  try {
    const result = await child;
    await Promise.all(kills);
    if (result.failed && result.exitCode === undefined && result.signal === undefined) {
      throw new ToolError(ErrorCode.internalError, `The shell could not be started: ${result.shortMessage}`, { retryable: false });
    }
    return {
      pid,
      exitCode: result.exitCode ?? null,
      signal: result.signal ?? null,
      timedOut,
      aborted,
      durationMs: Math.round(performance.now() - started),
      stdout: stdout.render(),
      stderr: stderr.render(),
      leftoversKilled,
    };
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
  }
}
