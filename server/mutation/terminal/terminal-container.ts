// Terminal commands in the project's sandbox container (URLBRIDGE_SANDBOX=container): the foreground run and the
// bg=1 launch /x dispatches to in that mode, with the same result shapes as the native path. A ContainerTerminal
// belongs to one bridge's terminal state (terminal-state.ts); both register with that bridge's process registry, so stop=, the end of a session or project, and shutdown reach them. Every
// process a command starts inherits a job marker in its environment; what carries it after the command's end
// (setsid, double forks, daemons) is found in the container's /proc and ended.
// The job marker and its sweep: terminal-container-job.ts; the bg=1 launch: terminal-container-background.ts; pty=1:
// pty/container-pty-channel.ts.
import { randomBytes, randomInt } from "node:crypto";
import type { Config } from "../../config.js";
import { projectContainersOptionsFromConfig } from "../../sandbox/container/from-config.js";
import { createProjectContainers, type ProjectContainers } from "../../sandbox/container/manager.js";
import { openPtyInContainer, type ContainerPtyOptions } from "./pty/container-pty-channel.js";
import type { PtyChannel } from "./pty/pty-channel.js";
import type { LaunchResult } from "./terminal-background.js";
import { launchBackgroundInContainer } from "./terminal-container-background.js";
import {
  commandEnv,
  displayCwd,
  sweepJob,
  type CommandContext,
  type ContainerForegroundOptions,
  type ContainerLaunchOptions,
} from "./terminal-container-job.js";
import { OutputCollector, STDERR_LIMITS, STDOUT_LIMITS } from "./terminal-output.js";
import type { EndReason, TerminalProcesses, TreeOwner } from "./terminal-processes.js";
import type { ForegroundResult } from "./terminal-run.js";

/**
 * Ids this module hands out for its commands (the `pid` of a result, what stop= and a pty=1's /i take): above
 * Linux's largest pid (PID_MAX_LIMIT, 2^22), so they never collide with the native path's launcher pids, nor with
 * each other (pids inside two projects' containers do). Each bridge run starts at a random point above it, so a
 * pid= an agent kept from before a restart names nothing rather than the new run's first process.
 */
const FIRST_HANDLE = 10_000_001;
const HANDLE_START_SPREAD = 2 ** 30;

/** One bridge's container commands: its manager of project containers, the handles it gave out, who ran where. */
export class ContainerTerminal {
  private readonly containers: ProjectContainers;
  private nextHandle = FIRST_HANDLE + randomInt(HANDLE_START_SPREAD);
  /** Where each session ran commands (its project and root): a session's end names only the session. */
  private readonly sessionRoots = new Map<string, { projectId: string; root: string }>();

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
    return runForegroundInContainer(this.context(options), options);
  }

  /**
   * Starts a bg=1 command in the project's container without awaiting its end, watches the start-up window as the
   * native path does, and logs its output to a bounded file. The job lives while its shell runs or any process
   * carrying its marker does; stop= (and the end of its session, project or the bridge) ends them all.
   */
  launchBackground(options: ContainerLaunchOptions): Promise<LaunchResult> {
    return launchBackgroundInContainer(this.context(options), options);
  }

  /**
   * pty=1: starts the command on a TTY in the project's container. The caller (pty-start.ts) registers it; its
   * stop, a signal and its end reach the job's processes by their marker.
   */
  openPty(options: ContainerPtyOptions): Promise<PtyChannel> {
    return openPtyInContainer(this.context(options), options);
  }

  /**
   * The registry's onScopeEnd for container mode. A session's end (rotate, disable, delete) ends every process in the
   * container of the root it ran in: one container per project root, so the other sessions of that root (the project
   * folder's) lose theirs too, while the project's other roots (its worktree sessions', or the project folder when a
   * worktree session ends) keep running. A project's end ends the processes of all its containers; its deletion
   * removes them.
   */
  async endScope(scope: { sessionId?: string; projectId?: string; projectDeleted?: boolean }): Promise<void> {
    if (scope.projectId !== undefined && !scope.projectDeleted) {
      await this.containers.endProcesses(scope.projectId).catch(() => false);
      return;
    }
    if (scope.projectId !== undefined) {
      for (const [session, ran] of this.sessionRoots)
        if (ran.projectId === scope.projectId) this.sessionRoots.delete(session);
      await this.containers.remove(scope.projectId).catch(() => false);
      return;
    }
    const ran = scope.sessionId !== undefined ? this.sessionRoots.get(scope.sessionId) : undefined;
    if (scope.sessionId !== undefined) this.sessionRoots.delete(scope.sessionId);
    if (ran !== undefined) await this.containers.endProcesses(ran.projectId, ran.root).catch(() => false);
  }

  /** Removes the container of one root of the project (a worktree session's, awaited before its folder goes). */
  async removeRoot(projectId: string, root: string): Promise<void> {
    for (const [session, ran] of this.sessionRoots)
      if (ran.projectId === projectId && ran.root === root) this.sessionRoots.delete(session);
    await this.containers.remove(projectId, root);
  }

  /**
   * At shutdown, after the registered commands were ended: removes this instance's containers, so nothing of a
   * stopped bridge keeps running on the host (they are warm for the bridge's lifetime, created again on the next
   * start's first command, ~210 ms).
   */
  async removeAtShutdown(): Promise<void> {
    this.sessionRoots.clear();
    await this.containers.removeAll().catch(() => 0);
  }

  /** What one command needs of this bridge: remembers who ran where and hands out the command's handle. */
  private context({ owner, root }: { owner: TreeOwner; root: string }): CommandContext {
    this.sessionRoots.set(owner.sessionId, { projectId: owner.projectId, root });
    return { containers: this.containers, processes: this.processes, handle: this.nextHandle++ };
  }
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
