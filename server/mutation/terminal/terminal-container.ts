// Terminal commands in the project's sandbox container (URLBRIDGE_SANDBOX=container): the foreground run and the
// bg=1 launch /x dispatches to in that mode, with the same result shapes as the native path. A ContainerTerminal
// belongs to one bridge's terminal state (terminal-state.ts); both register with that bridge's process registry, so stop=, the end of a session or project, and shutdown reach them. Every
// process a command starts inherits a job marker in its environment; what carries it after the command's end
// (setsid, double forks, daemons) is found in the container's /proc and ended.
import { randomBytes } from "node:crypto";
import { setTimeout as delay } from "node:timers/promises";
import type { Config } from "../../config.js";
import { ErrorCode, ToolError } from "../../errors.js";
import { CHILD_ENV_DEFAULTS } from "../../sandbox/env-scrub.js";
import { projectContainersOptionsFromConfig } from "../../sandbox/container/from-config.js";
import { createProjectContainers, type ProjectContainers } from "../../sandbox/container/manager.js";
import { CONTAINER_PROJECT_PATH } from "../../sandbox/container/spec.js";
import { StartupTranscript, watchStartup } from "./startup-transcript.js";
import { createMarkerFilter } from "../../sandbox/container/exec.js";
import {
  MAX_BACKGROUND_LOG_BYTES,
  MAX_BACKGROUND_LOG_FILES,
  MAX_BACKGROUND_PROCESSES,
  type LaunchResult,
} from "./terminal-background.js";
import { OutputCollector, STDERR_LIMITS, STDOUT_LIMITS } from "./terminal-output.js";
import type { EndReason, TerminalProcesses, TreeOwner } from "./terminal-processes.js";
import type { ForegroundResult } from "./terminal-run.js";

/** The variable every process of one command inherits (a random hex id per command). */
export const JOB_VARIABLE = "URLBRIDGE_JOB";
/**
 * Ids this module hands out for its commands (the `pid` of a result, what stop= takes): above Linux's largest
 * pid (PID_MAX_LIMIT, 2^22), so they never collide with the native path's launcher pids, nor with each other
 * (pids inside two projects' containers do).
 */
const FIRST_HANDLE = 10_000_001;
/** A bg=1 process has no timeout; coreutils timeout still needs one: a year. */
const BACKGROUND_TIMEOUT_MS = 365 * 24 * 3600 * 1000;
/** The sweep that finds or ends a command's leftovers is a short command itself. */
const SWEEP_TIMEOUT_MS = 15_000;
/** After a bg=1 shell exited, how long its last output may take to arrive. */
const EXIT_OUTPUT_GRACE_MS = 250;
/** How often a bg=1 job whose shell exited is checked for processes still carrying its marker. */
const LEFTOVER_POLL_MS = 5_000;

export interface ContainerCommandOptions {
  command: string;
  /** The project root as the bridge sees it. */
  root: string;
  /** The working directory relative to the root ("" or "." for the root). */
  cwd: string;
  owner: TreeOwner;
  /** The bridge's shutdown signal. */
  signal?: AbortSignal;
  /** Added to CHILD_ENV_DEFAULTS; the bridge's own environment never enters a sandbox. */
  env?: Record<string, string>;
}

export interface ContainerForegroundOptions extends ContainerCommandOptions {
  timeoutMs: number;
}

export interface ContainerLaunchOptions extends ContainerCommandOptions {
  signal: AbortSignal;
  windowMs?: number;
  quietMs?: number;
}

const displayCwd = (cwd: string) =>
  cwd === "" || cwd === "." ? CONTAINER_PROJECT_PATH : `${CONTAINER_PROJECT_PATH}/${cwd}`;

function commandEnv(options: ContainerCommandOptions, job: string): Record<string, string> {
  return { ...CHILD_ENV_DEFAULTS, ...options.env, [JOB_VARIABLE]: job };
}

/**
 * A shell loop over the container's /proc: every process (but the sweep itself, and the exec wrapper of
 * server/sandbox/container/exec.ts, which may still be exiting after it reported the command's end) whose
 * environment carries the job's marker; with `kill`, SIGKILLs them, in passes until none is found (a fork
 * between two passes is caught by the next), and prints how many. The job id is hex, safe inside the script.
 */
function sweepScript(job: string, kill: boolean): string {
  const marker = `${JOB_VARIABLE}=${job}`;
  const act = kill ? 'kill -KILL "$p" 2>/dev/null && f=$((f+1))' : "f=$((f+1))";
  return [
    "n=0",
    `for pass in 1 2 3 4 5; do f=0`,
    `  for d in /proc/[0-9]*; do p=\${d#/proc/}; [ "$p" = "$$" ] && continue`,
    `    case "$(tr '\\0' ' ' 2>/dev/null < "$d/cmdline")" in "sh -c "*" urlbridge-exec "*) continue;; esac`,
    `    case "$(tr '\\0' '\\n' 2>/dev/null < "$d/environ")" in *"${marker}"*) ${act};; esac`,
    "  done; n=$((n+f))",
    kill ? '  [ "$f" -eq 0 ] && break' : "  break",
    "done",
    'echo "$n"',
  ].join("\n");
}

/** Ends (or only counts) the processes still carrying the job's marker; answers how many. Never throws. */
async function sweepJob(
  containers: ProjectContainers,
  projectId: string,
  root: string,
  job: string,
  kill: boolean,
): Promise<number> {
  let out = "";
  try {
    await containers.exec({
      projectId,
      root,
      command: sweepScript(job, kill),
      timeoutMs: SWEEP_TIMEOUT_MS,
      onStdout: (chunk) => (out += chunk.toString("latin1")),
    });
  } catch {
    // The container is gone or being restarted; whatever carried the marker ended with it.
    return 0;
  }
  const count = Number.parseInt(out.trim(), 10);
  return Number.isFinite(count) ? count : 0;
}

/** One bridge's container commands: its manager of project containers, the handles it gave out, who ran where. */
export class ContainerTerminal {
  private readonly containers: ProjectContainers;
  private nextHandle = FIRST_HANDLE;
  /** Sessions that ran commands in a project's container: a session's end names only the session. */
  private readonly sessionProjects = new Map<string, string>();

  /** Configures the manager; call removeLeftovers() before the data plane listens. */
  constructor(
    config: Pick<Config, "sandboxContainer" | "agentFallback">,
    private readonly processes: TerminalProcesses,
  ) {
    this.containers = createProjectContainers(projectContainersOptionsFromConfig(config));
  }

  /**
   * Call once at start-up, before the data plane listens: removes this instance's containers left by an earlier
   * bridge process (a crash leaves commands running in them that nothing tracks any more; a project deleted while
   * the engine was down leaves its container). Answers a warning when the engine could not be reached: commands
   * then answer sandbox_unavailable.
   */
  async removeLeftovers(): Promise<string | undefined> {
    try {
      await this.containers.removeAll();
      return undefined;
    } catch (error) {
      return `URLBRIDGE_SANDBOX=container: the Docker engine is not reachable (${error instanceof Error ? error.message : String(error)}); terminal commands answer sandbox_unavailable until it is.`;
    }
  }

  /** Runs one foreground command in the project's container; the result is the native path's ForegroundResult. */
  runForeground(options: ContainerForegroundOptions): Promise<ForegroundResult> {
    return runForegroundInContainer(this.context(options.owner), options);
  }

  /**
   * Starts a bg=1 command in the project's container without awaiting its end, watches the start-up window as the
   * native path does, and logs its output to a bounded file. The job lives while its shell runs or any process
   * carrying its marker does; stop= (and the end of its session, project or the bridge) ends them all.
   */
  launchBackground(options: ContainerLaunchOptions): Promise<LaunchResult> {
    return launchBackgroundInContainer(this.context(options.owner), options);
  }

  /**
   * The registry's onScopeEnd for container mode. A session's end (rotate, disable, delete; removing the terminal
   * permission rotates every session of the project) ends every process in its project's container: one
   * container per project, so the project's other sessions' commands end too. A project's deletion removes it.
   */
  async endScope(scope: { sessionId?: string; projectId?: string; projectDeleted?: boolean }): Promise<void> {
    if (scope.projectId !== undefined && scope.projectDeleted) {
      for (const [session, project] of this.sessionProjects)
        if (project === scope.projectId) this.sessionProjects.delete(session);
      await this.containers.remove(scope.projectId).catch(() => false);
      return;
    }
    const projectId =
      scope.projectId ?? (scope.sessionId !== undefined ? this.sessionProjects.get(scope.sessionId) : undefined);
    if (scope.sessionId !== undefined) this.sessionProjects.delete(scope.sessionId);
    if (projectId !== undefined) await this.containers.endProcesses(projectId).catch(() => false);
  }

  /**
   * At shutdown, after the registered commands were ended: removes this instance's containers, so nothing of a
   * stopped bridge keeps running on the host (they are warm for the bridge's lifetime, created again on the next
   * start's first command, ~210 ms).
   */
  async removeAtShutdown(): Promise<void> {
    this.sessionProjects.clear();
    await this.containers.removeAll().catch(() => 0);
  }

  /** What one command needs of this bridge: remembers who ran where and hands out the command's handle. */
  private context(owner: TreeOwner): CommandContext {
    this.sessionProjects.set(owner.sessionId, owner.projectId);
    return { containers: this.containers, processes: this.processes, handle: this.nextHandle++ };
  }
}

interface CommandContext {
  containers: ProjectContainers;
  processes: TerminalProcesses;
  /** The command's id in results and stop= (FIRST_HANDLE and up). */
  handle: number;
}

async function runForegroundInContainer(
  context: CommandContext,
  options: ContainerForegroundOptions,
): Promise<ForegroundResult> {
  const started = performance.now();
  const { owner, root } = options;
  const stdout = new OutputCollector(STDOUT_LIMITS);
  const stderr = new OutputCollector(STDERR_LIMITS);
  const job = randomBytes(8).toString("hex");
  const { containers, processes, handle } = context;
  const stopper = new AbortController();
  let ended: EndReason | undefined;
  let finished: Promise<unknown> = Promise.resolve();
  const end = async (reason: EndReason) => {
    ended ??= reason;
    stopper.abort();
    await finished;
  };
  const onShutdown = () => void end("shutdown");
  options.signal?.addEventListener("abort", onShutdown, { once: true });
  const forget = processes.add({
    pid: handle,
    kind: "foreground",
    owner,
    command: options.command,
    cwd: displayCwd(options.cwd),
    startedAt: Date.now(),
    stop: end,
  });
  if (options.signal?.aborted) onShutdown();
  try {
    const work = (async () => {
      const result = await containers.exec({
        projectId: owner.projectId,
        root,
        command: options.command,
        cwd: options.cwd || ".",
        env: commandEnv(options, job),
        timeoutMs: options.timeoutMs,
        onStdout: (chunk) => stdout.push(chunk),
        onStderr: (chunk) => stderr.push(chunk),
        signal: stopper.signal,
      });
      // Nothing the command started outlives it (as the native launcher's --foreground): setsid'd and daemons too.
      return { result, leftovers: await sweepJob(containers, owner.projectId, root, job, true) };
    })();
    // The registry's stop resolves once the command and its leftovers are gone.
    finished = work.catch(() => undefined);
    const { result, leftovers } = await work;
    return {
      pid: handle,
      exitCode: result.exitCode,
      signal: result.signal,
      timedOut: result.timedOut,
      aborted: ended === "shutdown",
      scopeEnded: ended === "scope_ended" || ended === "stopped",
      durationMs: Math.round(performance.now() - started),
      stdout: stdout.render(),
      stderr: stderr.render(),
      leftoversKilled: ended || result.timedOut ? 0 : leftovers,
      ...(ended === "memory" || ended === "growth" ? { limitEnded: ended } : {}),
      launcherError: undefined,
    };
  } finally {
    options.signal?.removeEventListener("abort", onShutdown);
    forget();
  }
}

/** Where bg=1 logs live inside a project's container: its own /tmp, so the agent reads them with /x (tail). */
export const CONTAINER_LOG_DIR = "/tmp/urlbridge-logs";

/** Quotes text for sh as one word. */
const shellQuote = (text: string) => `'${text.replace(/'/g, "'\\''")}'`;

/** How often the log of a bg=1 job is checked for rotation. */
const LOG_ROTATE_CHECK_S = 2;

/**
 * The script a bg=1 command runs as inside the container: the command (stdout and stderr interleaved) through
 * `tee -a`, to the exec's stream (the start-up transcript) and into a log in the container's /tmp, which a
 * small loop copies to "<log>.1" and truncates once it passes MAX_BACKGROUND_LOG_BYTES (checked every 2 s; sh
 * and coreutils only). The loop drops the job's marker, so it never counts as the job's, and ends with the
 * script. The newest MAX_BACKGROUND_LOG_FILES logs are kept. When the command's shell exits, a marker line with
 * its status goes to stderr (outside the pipe); the script lives on while anything holds the command's output,
 * like the native launcher, and exits with the command's status.
 */
export function backgroundScript(command: string, logFile: string, job: string): string {
  const log = shellQuote(logFile);
  const status = shellQuote(`${logFile}.status`);
  const rotate = `while kill -0 "$1" 2>/dev/null; do sleep ${LOG_ROTATE_CHECK_S}; [ "$(wc -c < "$2")" -gt "$3" ] && { cp "$2" "$2.1"; : > "$2"; }; done`;
  return [
    `mkdir -p ${CONTAINER_LOG_DIR}`,
    `ls -1t ${CONTAINER_LOG_DIR}/*.log 2>/dev/null | tail -n +${MAX_BACKGROUND_LOG_FILES} | while IFS= read -r old; do rm -f "$old" "$old.1"; done`,
    `: > ${log}`,
    `env -u ${JOB_VARIABLE} sh -c ${shellQuote(rotate)} rotate "$$" ${log} ${MAX_BACKGROUND_LOG_BYTES} </dev/null >/dev/null 2>&1 &`,
    `{ ( eval ${shellQuote(command)} ) 2>&1; c=$?; echo "$c" > ${status}; printf '\\036urlbridge-${job} exit %s\\n' "$c" >&2; } | tee -a ${log}`,
    `c=$(cat ${status} 2>/dev/null || echo 1); rm -f ${status}; exit "$c"`,
  ].join("\n");
}

type Outcome = { ok: true; exitCode: number | null; signal: string | null } | { ok: false; error: unknown };

async function launchBackgroundInContainer(
  context: CommandContext,
  options: ContainerLaunchOptions,
): Promise<LaunchResult> {
  options.signal.throwIfAborted();
  const { owner, root } = options;
  const { containers, processes, handle } = context;
  const count = processes.list({ kind: "background" }).length;
  if (count >= MAX_BACKGROUND_PROCESSES) {
    throw new ToolError(
      ErrorCode.backgroundLimitReached,
      `${count} background processes are running (the limit is ${MAX_BACKGROUND_PROCESSES}). Stop one of yours with /x?stop=<pid> (the stop URL its launch answered), then retry.`,
      {
        detail: {
          running: processes
            .list({ kind: "background" })
            .map(({ pid, command }) => ({ pid, command: command.slice(0, 120) })),
        },
        agentAction: "wait_and_retry",
      },
    );
  }
  const started = performance.now();
  const job = randomBytes(8).toString("hex");
  const logFile = `${CONTAINER_LOG_DIR}/${new Date().toISOString().replace(/[:.]/g, "-")}-${randomBytes(4).toString("hex")}.log`;
  const transcript = new StartupTranscript();
  let watching = true;
  const onChunk = (chunk: Buffer) => {
    if (watching) transcript.push(chunk);
  };
  let onCommandExit: () => void = () => {};
  const commandExited = new Promise<void>((resolve) => (onCommandExit = resolve));
  const stderr = createMarkerFilter(job, onChunk, (kind) => kind === "exit" && onCommandExit());
  const stopper = new AbortController();
  const shell: Promise<Outcome> = containers
    .exec({
      projectId: owner.projectId,
      root,
      command: backgroundScript(options.command, logFile, job),
      cwd: options.cwd || ".",
      env: commandEnv(options, job),
      timeoutMs: BACKGROUND_TIMEOUT_MS,
      onStdout: onChunk,
      onStderr: (chunk) => stderr.write(chunk),
      signal: stopper.signal,
    })
    .then(
      (result) => ({ ok: true, exitCode: result.exitCode, signal: result.signal }),
      (error: unknown) => ({ ok: false, error }),
    );

  let gone = false;
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      stopper.abort();
      await shell;
      await sweepJob(containers, owner.projectId, root, job, true);
      gone = true;
    })());
  const onShutdown = () => void stop();
  options.signal.addEventListener("abort", onShutdown, { once: true });
  const forget = processes.add({
    pid: handle,
    kind: "background",
    owner,
    command: options.command,
    cwd: displayCwd(options.cwd),
    startedAt: Date.now(),
    logFile,
    stop,
  });
  const release = () => {
    gone = true;
    forget();
    options.signal.removeEventListener("abort", onShutdown);
  };

  const exited = Promise.race([commandExited, shell]);
  const startup = await watchStartup({
    transcript,
    exited,
    ...(options.windowMs ? { windowMs: options.windowMs } : {}),
    ...(options.quietMs ? { quietMs: options.quietMs } : {}),
  });
  // The command's shell exited: the script ends too unless something it started still holds the output.
  const outcome =
    startup === "exited" ? await Promise.race([shell, delay(EXIT_OUTPUT_GRACE_MS).then(() => undefined)]) : undefined;
  watching = false;
  stderr.flush();
  if (outcome && !outcome.ok) {
    release();
    throw outcome.error;
  }
  // Running: the script holds on (a server behind "&" keeps the output), or a process that carries the job's
  // marker is left (a setsid'd daemon that closed its output).
  const alive = outcome === undefined || (await sweepJob(containers, owner.projectId, root, job, false)) > 0;
  if (alive)
    void watchJob(
      shell,
      () => gone || stopping !== undefined,
      () => sweepJob(containers, owner.projectId, root, job, false),
    ).then(release);
  else release();
  return {
    pid: handle,
    state: alive ? "running" : "exited",
    exitCode: alive ? null : (outcome as { exitCode: number | null }).exitCode,
    signal: alive ? null : (outcome as { signal: string | null }).signal,
    ...transcript.report(startup, started),
    logFile,
  };
}

/** Resolves once the job's shell has exited and no process carries its marker any more (or it was stopped). */
async function watchJob(
  shell: Promise<Outcome>,
  stopped: () => boolean,
  remaining: () => Promise<number>,
): Promise<void> {
  await shell;
  // Bounded by the job's own life: one short exec every LEFTOVER_POLL_MS while something of it runs.
  while (!stopped() && (await remaining()) > 0) {
    await new Promise((resolve) => setTimeout(resolve, LEFTOVER_POLL_MS).unref());
  }
}
