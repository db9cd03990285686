// bg=1 launches: spawn through the sandbox launcher detached from the request, watch the start-up window, report
// the transcript and the announced addresses, then keep logging output to a bounded file outside the project
// until the tree ends. The launcher's pid stands for the whole tree: it lives while anything the command
// started (a server behind "&", a setsid'd daemon) lives, and ending it ends them all.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { ErrorCode, ToolError } from "../../errors.js";
import { StartupTranscript, watchStartup, type StartupEnd } from "./startup-transcript.js";
import type { BoundedText } from "./terminal-output.js";
import type { TerminalProcesses, TreeOwner } from "./terminal-processes.js";
import { spawnCommand, type SpawnedCommand, type SpawnOptions } from "./terminal-spawn.js";

/** Background processes alive at once across all sessions; more are refused until one ends. */
export const MAX_BACKGROUND_PROCESSES = 8;
/** A log file rotates to "<name>.1" past this size, so a chatty server uses at most twice this on disk. */
export const MAX_BACKGROUND_LOG_BYTES = 1024 * 1024;
/** Log files kept from earlier launches; older ones are deleted when a new launch starts. */
export const MAX_BACKGROUND_LOG_FILES = 16;
/** After the shell exits during start-up, how long its last output may take to arrive. */
const EXIT_OUTPUT_GRACE_MS = 250;

/**
 * Outside every project (agents never see it through /r), private to the bridge's user; one folder per project
 * when given, which that project's sandboxed commands may read (to `tail` a server's log) and nobody else.
 */
export function backgroundLogDir(projectId?: string): string {
  const uid = typeof process.getuid === "function" ? process.getuid() : "user";
  const base = path.join(os.tmpdir(), `urlbridge-terminal-${uid}`);
  return projectId ? path.join(base, projectId) : base;
}

/** Who may read a project's logs besides the bridge: the group of the identity its commands run as. */
export interface LogReader {
  gid: number;
}

export interface BackgroundProcess {
  pid: number;
  command: string;
  cwd: string;
  startedAt: number;
  logFile: string;
}

export function listBackground(processes: TerminalProcesses, owner?: Partial<TreeOwner>): BackgroundProcess[] {
  return processes
    .list({ kind: "background", ...owner })
    .map(({ pid, command, cwd, startedAt, logFile }) => ({ pid, command, cwd, startedAt, logFile: logFile ?? "" }));
}

export interface LaunchOptions extends SpawnOptions {
  /** The bridge's shutdown signal: background processes end with the bridge. */
  signal: AbortSignal;
  windowMs?: number;
  quietMs?: number;
  /** Who started it: the registry ends it with its session or project, and only its session may stop it. */
  owner?: TreeOwner;
  /** The bridge's registry of live trees (its MutationRuntime's): the limit counts it, stop= and scope ends find it. */
  processes: TerminalProcesses;
  /** The project's log folder (backgroundLogDir(projectId)); default the shared one. */
  logDir?: string;
  /** When the bridge is root: the group that may read the logs (the agent identity's). */
  logReader?: LogReader;
}

export interface LaunchResult {
  pid: number;
  /** "running" when the window closed with the process (or processes it started in its group) alive. */
  state: "running" | "exited";
  exitCode: number | null;
  signal: string | null;
  startup: StartupEnd;
  startupMs: number;
  transcript: BoundedText;
  detectedUrls: string[];
  detectedPorts: number[];
  logFile: string;
}

/** Appends to a log file, rotating it once it passes MAX_BACKGROUND_LOG_BYTES. Never throws. */
class RotatingLog {
  private fd: number | undefined;
  private size = 0;

  constructor(
    readonly file: string,
    private readonly reader?: LogReader,
  ) {
    this.fd = this.open();
  }

  /** Never through a symlink; readable by the project's agent group (0640 root:gid) when the bridge is root. */
  private open(): number {
    const fd = fs.openSync(
      this.file,
      fs.constants.O_WRONLY | fs.constants.O_APPEND | fs.constants.O_CREAT | fs.constants.O_NOFOLLOW,
      this.reader ? 0o640 : 0o600,
    );
    if (this.reader) fs.fchownSync(fd, process.getuid?.() ?? 0, this.reader.gid);
    return fd;
  }

  write(chunk: Buffer): void {
    if (this.fd === undefined) return;
    try {
      if (this.size + chunk.length > MAX_BACKGROUND_LOG_BYTES) {
        fs.closeSync(this.fd);
        fs.renameSync(this.file, `${this.file}.1`);
        this.fd = this.open();
        this.size = 0;
      }
      fs.writeSync(this.fd, chunk);
      this.size += chunk.length;
    } catch {
      // A full disk must not take the bridge down; the process keeps running without its log.
      this.close();
    }
  }

  close(): void {
    if (this.fd === undefined) return;
    try {
      fs.closeSync(this.fd);
    } catch {
      // Already closed.
    }
    this.fd = undefined;
  }
}

function prepareLogFile(dir: string, reader: LogReader | undefined): string {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (reader) {
    // The base stays 0700 except for traversal; the project's folder admits its agent group only.
    fs.chmodSync(path.dirname(dir), 0o711);
    fs.chownSync(dir, process.getuid?.() ?? 0, reader.gid);
    fs.chmodSync(dir, 0o750);
  }
  const logs = fs
    .readdirSync(dir)
    .filter((name) => name.endsWith(".log"))
    .map((name) => ({ name, mtime: fs.statSync(path.join(dir, name)).mtimeMs }))
    .sort((a, b) => b.mtime - a.mtime);
  for (const old of logs.slice(MAX_BACKGROUND_LOG_FILES - 1)) {
    fs.rmSync(path.join(dir, old.name), { force: true });
    fs.rmSync(path.join(dir, `${old.name}.1`), { force: true });
  }
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  return path.join(dir, `${stamp}-${randomBytes(4).toString("hex")}.log`);
}

export async function launchBackground(options: LaunchOptions): Promise<LaunchResult> {
  options.signal.throwIfAborted();
  const count = options.processes.count({ kind: "background" });
  if (count >= MAX_BACKGROUND_PROCESSES) {
    throw new ToolError(
      ErrorCode.backgroundLimitReached,
      `${count} background processes are running (the limit is ${MAX_BACKGROUND_PROCESSES}). Stop one of yours with /x?stop=<pid> (the stop URL its launch answered), then retry.`,
      {
        detail: {
          running: listBackground(options.processes).map(({ pid, command }) => ({
            pid,
            command: command.slice(0, 120),
          })),
        },
        agentAction: "wait_and_retry",
      },
    );
  }
  const logFile = prepareLogFile(options.logDir ?? backgroundLogDir(), options.logReader);
  const log = new RotatingLog(logFile, options.logReader);
  const transcript = new StartupTranscript();
  let watching = true;
  const started = performance.now();
  // Until the launcher has a pid, the registry holds a pending start: the limit counts it, scope ends reach it.
  const pending = options.processes.begin("background", options.owner);
  let child: SpawnedCommand;
  try {
    child = await spawnCommand({ ...options, foreground: false });
  } catch (error) {
    pending.abandoned();
    log.close();
    throw error;
  }
  const pid = child.pid;
  const onChunk = (chunk: Buffer) => {
    log.write(chunk);
    if (watching) transcript.push(chunk);
  };
  child.stdout.on("data", onChunk);
  child.stderr.on("data", onChunk);
  // The shell's own end, as the launcher reports it once the whole tree is gone.
  const finished = child.done;

  if (pid === undefined) {
    pending.abandoned();
    const end = await finished;
    log.close();
    if (end.spawnerLost) throw spawnerLost();
    throw new ToolError(
      ErrorCode.internalError,
      "The shell could not be started (spawn failed). Check that /bin/sh exists and the launcher is built (npm run build:native).",
      {
        retryable: false,
      },
    );
  }

  const onShutdown = () => void child.stop();
  options.signal.addEventListener("abort", onShutdown, { once: true });
  // The bridge began shutting down while the launcher started.
  if (options.signal.aborted) onShutdown();
  const forget = pending.started({
    pid,
    kind: "background",
    owner: options.owner,
    command: options.command,
    cwd: options.cwd,
    startedAt: Date.now(),
    logFile,
    stop: () => child.stop(),
  });
  void finished.then(() => {
    forget();
    log.close();
    options.signal.removeEventListener("abort", onShutdown);
  });
  // The start-up window closes early when the launcher exits: the shell and everything it started are done.
  const exited = child.exited.then(() => finished).then((end) => ({ code: end.exitCode, signal: end.signal }));

  const startup = await watchStartup({ transcript, exited, windowMs: options.windowMs, quietMs: options.quietMs });
  const exit = startup === "exited" ? await exited : undefined;
  if (exit) await Promise.race([finished, new Promise((resolve) => setTimeout(resolve, EXIT_OUTPUT_GRACE_MS))]);
  watching = false;
  // A shell that started a server with "&" and returned has exited, but the launcher lives on with the server.
  const alive = child.running();
  const end = alive ? undefined : await finished;
  if (end?.launcherError) throw launcherRefused(end.launcherError);
  return {
    pid,
    state: alive ? "running" : "exited",
    exitCode: end?.exitCode ?? null,
    signal: end?.signal ?? null,
    ...transcript.report(startup, started),
    logFile,
  };
}

/** The resident spawner died while starting or running a command: it may have begun, so it is not re-run. */
export function spawnerLost(extra?: Record<string, unknown>): ToolError {
  return new ToolError(
    ErrorCode.interrupted,
    "The bridge's command spawner ended while the command started or ran, and its process tree was ended with it. Check the project state, then run the command again (a new spawner starts by itself).",
    { detail: { started: true, reason: "spawner_lost" }, ...(extra ? { extra } : {}) },
  );
}

/** The launcher refused to start a command (cwd through a symlink, Landlock missing while required...). */
export function launcherRefused(message: string): ToolError {
  if (/is a symlink/.test(message)) {
    return new ToolError(ErrorCode.symlinkEscape, `The command did not run: ${message}.`, {
      detail: { launcher: message },
      retryable: false,
    });
  }
  // The bridge walked cwd= a moment earlier, so a component that is now missing or not a directory changed under
  // the call (a rename or a swap): the same answer the file tools give, and retrying is safe since nothing ran.
  if (/^cwd component .*(No such file or directory|Not a directory|Too many levels of symbolic links)$/.test(message)) {
    return new ToolError(
      ErrorCode.pathChanged,
      `The command did not run: ${message} (the folder changed while the call started). Fetch the same URL again.`,
      {
        detail: { launcher: message },
        retryable: true,
        agentAction: "wait_and_retry",
      },
    );
  }
  return new ToolError(
    ErrorCode.sandboxUnavailable,
    `The sandbox did not start the command: ${message}. Nothing ran; the operator can check the Sandbox line of the control UI.`,
    {
      detail: { launcher: message },
      retryable: false,
    },
  );
}
