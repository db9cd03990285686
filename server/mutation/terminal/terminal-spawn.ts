// The one way terminal commands start: through the sandbox launcher (server/sandbox/launcher.ts), which confines
// the shell, stays its parent as a subreaper and ends the whole tree (setsid'd daemons included) when told.
// Without a built launcher (no C compiler) the shell is spawned bare and its tree is found through /proc.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import type { Readable } from "node:stream";
import type { LaunchPlan } from "../../sandbox/launcher.js";
import { launcherBinary } from "../../sandbox/launcher.js";
import { KILL_GRACE_MS, killTree } from "./process-tree.js";

/** After the launcher exits, how long its pipes may take to deliver their last bytes before they are cut. */
const OUTPUT_DRAIN_MS = 250;
/** Past the launcher's own grace, how long it may take to end its tree before it is killed outright. */
const LAUNCHER_STOP_SLACK_MS = 3000;
/** The launcher writes its one JSON status line on this fd (stdio index 3). */
const STATUS_FD = 3;

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
  /** The project's sandbox plan; without one the launcher only tracks the tree (process-level tests). */
  plan?: LaunchPlan;
}

/** How the command ended, as the launcher saw PROGRAM (the shell), plus what it left behind. */
export interface CommandEnd {
  exitCode: number | null;
  signal: string | null;
  /** Processes still running when the tree was ended, besides the shell. */
  leftovers: number;
  /** The launcher refused to start the command (its message is the first stderr line). */
  launcherError: string | undefined;
}

export interface SpawnedCommand {
  child: ChildProcess;
  pid: number | undefined;
  stdout: Readable;
  stderr: Readable;
  /** True while the launcher (or the bare shell) runs. */
  running(): boolean;
  /** Resolves once the launcher has exited and its output is drained (bounded); never rejects. */
  done: Promise<CommandEnd>;
  /** Resolves at the launcher's exit, before its output is drained. */
  exited: Promise<void>;
  /** Ends the whole tree (SIGTERM, grace, SIGKILL) and resolves when it is gone. */
  stop(): Promise<void>;
}

interface StatusLine {
  exitCode: number | null;
  signal: string | null;
  leftovers: number;
}

const LAUNCHER_PREFIX = "urlbridge-sandbox: ";

/**
 * Whether the launcher runs this command, and so ends its tree by itself if the bridge dies (its parent-death
 * signal). Only a bare spawn leaves a tree that outlives a crash, for recovery to end from a checkpoint.
 */
export function treeEndsWithBridge(plan: LaunchPlan | undefined): boolean {
  return Boolean(plan?.file ?? launcherBinary());
}

export function spawnCommand(options: SpawnOptions & { foreground: boolean }): SpawnedCommand {
  const shell = resolveShell();
  const binary = options.plan?.file ?? launcherBinary();
  const shellArgv = [shell.file, ...shell.args, options.command];
  const env = { ...options.env, ...(options.plan?.env ?? {}) };
  const child = binary
    ? spawn(binary, [...(options.plan?.args ?? []), ...(options.foreground && !options.plan ? ["--foreground"] : []), "--status-fd", String(STATUS_FD), "--", ...shellArgv], {
        cwd: options.plan?.spawnCwd ?? options.cwd,
        env,
        stdio: ["ignore", "pipe", "pipe", "pipe"],
        detached: true,
      })
    : spawn(shellArgv[0]!, shellArgv.slice(1), { cwd: options.cwd, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  const pid = child.pid;
  let statusText = "";
  child.stdio[3]?.on("data", (chunk: Buffer) => (statusText += chunk.toString("utf8")));
  let firstStderr = "";
  child.stderr!.on("data", (chunk: Buffer) => {
    if (firstStderr.length < 512) firstStderr += chunk.toString("utf8");
  });

  let alive = pid !== undefined;
  const exitedWith = new Promise<{ code: number | null; signal: string | null }>((resolve) => {
    child.once("exit", (code, signal) => {
      alive = false;
      resolve({ code, signal });
    });
    child.once("error", () => {
      alive = false;
      resolve({ code: null, signal: null });
    });
  });
  const streamsClosed = Promise.all([child.stdout!, child.stderr!, ...(child.stdio[3] ? [child.stdio[3] as Readable] : [])].map(
    (stream) => new Promise<void>((resolve) => (stream.readableEnded || stream.destroyed ? resolve() : stream.once("close", () => resolve()))),
  ));
  const done = exitedWith.then(async (exit) => {
    // A process the launcher failed to end could hold the pipes forever: never wait on them unbounded.
    await Promise.race([streamsClosed, new Promise((resolve) => setTimeout(resolve, OUTPUT_DRAIN_MS))]);
    for (const stream of [child.stdout, child.stderr, child.stdio[3]]) (stream as Readable | null)?.destroy();
    const status = parseStatus(statusText);
    const launcherError = exit.code === 125 && firstStderr.startsWith(LAUNCHER_PREFIX) ? firstStderr.slice(LAUNCHER_PREFIX.length).split("\n")[0] : undefined;
    if (status) return { ...status, launcherError };
    return { exitCode: exit.code, signal: exit.signal, leftovers: 0, launcherError };
  });

  let stopping: Promise<void> | undefined;
  const stop = () => {
    if (pid === undefined || !alive) return Promise.resolve();
    stopping ??= (async () => {
      if (!binary) {
        await killTree(pid);
        return;
      }
      signal(child, "SIGTERM");
      const ended = await Promise.race([exitedWith.then(() => true), sleep(KILL_GRACE_MS + LAUNCHER_STOP_SLACK_MS).then(() => false)]);
      // The launcher itself is stuck: end it and whatever /proc still shows beneath it.
      if (!ended) await killTree(pid, 0);
    })();
    return stopping;
  };

  return {
    child,
    pid,
    stdout: child.stdout!,
    stderr: child.stderr!,
    running: () => alive,
    done,
    exited: exitedWith.then(() => undefined),
    stop,
  };
}

function parseStatus(text: string): StatusLine | undefined {
  const line = text.split("\n").find((l) => l.startsWith("{"));
  if (!line) return undefined;
  try {
    const parsed = JSON.parse(line) as StatusLine;
    return typeof parsed.leftovers === "number" ? parsed : undefined;
  } catch {
    return undefined;
  }
}

function signal(child: ChildProcess, name: NodeJS.Signals): void {
  try {
    child.kill(name);
  } catch {
    // Already gone.
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref?.());
