// The one way terminal commands start: through the sandbox launcher (server/sandbox/launcher.ts), which confines
// the shell, stays its parent as a subreaper and ends the whole tree (setsid'd daemons included) when told.
// The resident spawner (server/sandbox/spawner.ts) forks the launcher, so the bridge does not fork itself; when
// it cannot (off, not built, not ready yet) the bridge spawns the launcher directly, with the same result. The
// start is asynchronous: a spawner slow to answer does not hold the event loop (spawner-channel.ts).
// Without a built launcher (no C compiler) the shell is spawned bare and its tree is found through /proc.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import { Readable } from "node:stream";
import type { LaunchPlan } from "../../sandbox/launcher.js";
import { launcherBinary } from "../../sandbox/launcher.js";
import { spawnThroughSpawner, SpawnerLost, type SpawnerChild } from "../../sandbox/spawner.js";
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
  /** The resident spawner died while the command ran (or started); the launcher ended its tree by itself. */
  spawnerLost: boolean;
}

export interface SpawnedCommand {
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

/** How the launcher (or bare shell) process ended, before its output is drained. */
interface LauncherExit {
  code: number | null;
  signal: string | null;
  /** Its --status-fd line so far: read once the output is drained. */
  status: () => string;
  /** The resident spawner died before it reported this launcher. */
  lost: boolean;
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

/** Starts the command; resolves once its launcher has a pid (or could not start: pid undefined). Never rejects on a lost spawner. */
export async function spawnCommand(options: SpawnOptions & { foreground: boolean }): Promise<SpawnedCommand> {
  const shell = resolveShell();
  const binary = options.plan?.file ?? launcherBinary();
  const shellArgv = [shell.file, ...shell.args, options.command];
  const env = { ...options.env, ...(options.plan?.env ?? {}) };
  if (!binary)
    return fromChild(
      spawn(shellArgv[0]!, shellArgv.slice(1), {
        cwd: options.cwd,
        env,
        stdio: ["ignore", "pipe", "pipe"],
        detached: true,
      }),
      false,
    );
  const args = [
    ...(options.plan?.args ?? []),
    ...(options.foreground && !options.plan ? ["--foreground"] : []),
    "--status-fd",
    String(STATUS_FD),
    "--",
    ...shellArgv,
  ];
  const cwd = options.plan?.spawnCwd ?? options.cwd;
  let resident: SpawnerChild | undefined;
  try {
    resident = await spawnThroughSpawner({ file: binary, args, cwd, env });
  } catch (error) {
    if (!(error instanceof SpawnerLost)) throw error;
    return lostBeforeStart();
  }
  if (resident) return fromSpawner(resident);
  return fromChild(spawn(binary, args, { cwd, env, stdio: ["ignore", "pipe", "pipe", "pipe"], detached: true }), true);
}

/** What both start paths share once the launcher (or bare shell) runs: the end, drained and parsed, and stop. */
function commandOf(
  io: { pid: number | undefined; stdout: Readable; stderr: Readable; extra: Readable[] },
  exitedWith: Promise<LauncherExit>,
  isAlive: () => boolean,
  signalLauncher: ((name: NodeJS.Signals) => void) | undefined,
): SpawnedCommand {
  const { pid } = io;
  let firstStderr = "";
  io.stderr.on("data", (chunk: Buffer) => {
    if (firstStderr.length < 512) firstStderr += chunk.toString("utf8");
  });
  const streams = [io.stdout, io.stderr, ...io.extra];
  const streamsClosed = Promise.all(
    streams.map(
      (stream) =>
        new Promise<void>((resolve) =>
          stream.readableEnded || stream.destroyed ? resolve() : stream.once("close", () => resolve()),
        ),
    ),
  );
  const done = exitedWith.then(async (exit) => {
    // A process the launcher failed to end could hold the pipes forever: never wait on them unbounded.
    await Promise.race([streamsClosed, new Promise((resolve) => setTimeout(resolve, OUTPUT_DRAIN_MS))]);
    for (const stream of streams) stream.destroy();
    const status = parseStatus(exit.status());
    const launcherError =
      exit.code === 125 && firstStderr.startsWith(LAUNCHER_PREFIX)
        ? firstStderr.slice(LAUNCHER_PREFIX.length).split("\n")[0]
        : undefined;
    const spawnerLost = exit.lost;
    if (status) return { ...status, launcherError, spawnerLost };
    return { exitCode: exit.code, signal: exit.signal, leftovers: 0, launcherError, spawnerLost };
  });

  let stopping: Promise<void> | undefined;
  const stop = () => {
    if (pid === undefined || !isAlive()) return Promise.resolve();
    stopping ??= (async () => {
      if (!signalLauncher) {
        await killTree(pid);
        return;
      }
      signalLauncher("SIGTERM");
      const ended = await Promise.race([
        exitedWith.then(() => true),
        sleep(KILL_GRACE_MS + LAUNCHER_STOP_SLACK_MS).then(() => false),
      ]);
      // The launcher itself is stuck: end it and whatever /proc still shows beneath it.
      if (!ended) await killTree(pid, 0);
    })();
    return stopping;
  };

  return {
    pid,
    stdout: io.stdout,
    stderr: io.stderr,
    running: isAlive,
    done,
    exited: exitedWith.then(() => undefined),
    stop,
  };
}

/** A launcher (launched = true) or bare shell the bridge forked itself. */
function fromChild(child: ChildProcess, launched: boolean): SpawnedCommand {
  let statusText = "";
  const statusStream = child.stdio[3] as Readable | null | undefined;
  statusStream?.on("data", (chunk: Buffer) => (statusText += chunk.toString("utf8")));
  let alive = child.pid !== undefined;
  // The status line is complete once its pipe closed, which commandOf awaits (bounded) before reading it.
  const status = () => statusText;
  const exitedWith = new Promise<LauncherExit>((resolve) => {
    child.once("exit", (code, signal) => {
      alive = false;
      resolve({ code, signal, status, lost: false });
    });
    child.once("error", () => {
      alive = false;
      resolve({ code: null, signal: null, status, lost: false });
    });
  });
  const io = {
    pid: child.pid,
    stdout: child.stdout!,
    stderr: child.stderr!,
    extra: statusStream ? [statusStream] : [],
  };
  const signalLauncher = launched ? (name: NodeJS.Signals) => signal(child, name) : undefined;
  return commandOf(io, exitedWith, () => alive, signalLauncher);
}

/** A launcher the resident spawner forked: its pipes opened by the bridge, its end reported by the spawner. */
function fromSpawner(resident: SpawnerChild): SpawnedCommand {
  let alive = true;
  const exitedWith = resident.exited.then((exit) => {
    alive = false;
    return { ...exit, status: () => exit.status };
  });
  return commandOf(
    { pid: resident.pid, stdout: resident.stdout, stderr: resident.stderr, extra: [] },
    exitedWith,
    () => alive,
    (name) => resident.kill(name),
  );
}

/** The spawner died or hung while starting this command: it may have begun, so it is reported, never retried. */
function lostBeforeStart(): SpawnedCommand {
  const empty = () => Readable.from([]);
  return commandOf(
    { pid: undefined, stdout: empty(), stderr: empty(), extra: [] },
    Promise.resolve({ code: null, signal: null, status: () => "", lost: true }),
    () => false,
    undefined,
  );
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
