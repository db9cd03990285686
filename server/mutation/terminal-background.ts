// bg=1 launches: spawn detached from the request, watch the start-up window, report the transcript and the
// announced addresses, then keep logging output to a bounded file outside the project until the process ends.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { ErrorCode, ToolError } from "../errors.js";
import { killTree, listTree } from "./process-tree.js";
import { StartupTranscript, watchStartup, type StartupEnd } from "./startup-transcript.js";
import { spawnCommand, type SpawnOptions } from "./terminal-run.js";
import type { BoundedText } from "./terminal-output.js";

/** Background processes alive at once across all sessions; more are refused until one ends. */
export const MAX_BACKGROUND_PROCESSES = 8;
/** A log file rotates to "<name>.1" past this size, so a chatty server uses at most twice this on disk. */
export const MAX_BACKGROUND_LOG_BYTES = 1024 * 1024;
/** Log files kept from earlier launches; older ones are deleted when a new launch starts. */
export const MAX_BACKGROUND_LOG_FILES = 16;
/** After the shell exits during start-up, how long its last output may take to arrive. */
const EXIT_OUTPUT_GRACE_MS = 250;

/** Outside every project (agents never see it through /r), private to the bridge's user. */
export function backgroundLogDir(): string {
  const uid = typeof process.getuid === "function" ? process.getuid() : "user";
  return path.join(os.tmpdir(), `urlbridge-terminal-${uid}`);
}

export interface BackgroundProcess {
  pid: number;
  command: string;
  cwd: string;
  startedAt: number;
  logFile: string;
}

interface Tracked extends BackgroundProcess {
  stop(): Promise<void>;
}

const running = new Map<number, Tracked>();

export function listBackground(): BackgroundProcess[] {
  return [...running.values()].map(({ stop: _stop, ...info }) => info);
}

export interface LaunchOptions extends SpawnOptions {
  /** The bridge's shutdown signal: background processes end with the bridge. */
  signal: AbortSignal;
  windowMs?: number;
  quietMs?: number;
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

  constructor(readonly file: string) {
    this.fd = fs.openSync(file, "a", 0o600);
  }

  write(chunk: Buffer): void {
    if (this.fd === undefined) return;
    try {
      if (this.size + chunk.length > MAX_BACKGROUND_LOG_BYTES) {
        fs.closeSync(this.fd);
        fs.renameSync(this.file, `${this.file}.1`);
        this.fd = fs.openSync(this.file, "a", 0o600);
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

function prepareLogFile(): string {
  const dir = backgroundLogDir();
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
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
  if (running.size >= MAX_BACKGROUND_PROCESSES) {
    throw new ToolError(
      ErrorCode.backgroundLimitReached,
      `${running.size} background processes are running (the limit is ${MAX_BACKGROUND_PROCESSES}). Stop one with /x?raw=kill -- -<pid> (its process group), then retry.`,
      { detail: { running: listBackground().map(({ pid, command }) => ({ pid, command: command.slice(0, 120) })) }, agentAction: "wait_and_retry" },
    );
  }
  const logFile = prepareLogFile();
  const log = new RotatingLog(logFile);
  const transcript = new StartupTranscript();
  let watching = true;
  const started = performance.now();
  const child = spawnCommand(options);
  const pid = child.pid;
  const onChunk = (chunk: Buffer) => {
    log.write(chunk);
    if (watching) transcript.push(chunk);
  };
  child.stdout?.on("data", onChunk);
  child.stderr?.on("data", onChunk);
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => {
    child.once("exit", (code, signal) => resolve({ code, signal }));
  });
  // Resolves after exit and the end of its output; never rejects (reject: false).
  const finished = child.then((result) => result);

  if (pid === undefined) {
    const result = await finished;
    log.close();
    throw new ToolError(ErrorCode.internalError, `The shell could not be started: ${result.shortMessage}`, { retryable: false });
  }

  const stop = async () => {
    await killTree(pid);
  };
  const onShutdown = () => void stop();
  options.signal.addEventListener("abort", onShutdown, { once: true });
  running.set(pid, { pid, command: options.command, cwd: options.cwd, startedAt: Date.now(), logFile, stop });
  void finished.then(() => {
    running.delete(pid);
    log.close();
    options.signal.removeEventListener("abort", onShutdown);
  });

  const startup = await watchStartup({ transcript, exited, windowMs: options.windowMs, quietMs: options.quietMs });
  const exit = startup === "exited" ? await exited : undefined;
  // "exit" can fire before the last output is read: keep collecting until the pipes close (or a short grace
  // passes, since a child left holding them can keep them open).
  if (exit) await Promise.race([finished, new Promise((resolve) => setTimeout(resolve, EXIT_OUTPUT_GRACE_MS))]);
  watching = false;
  // A shell that started a server with "&" and returned has exited, but its process group lives on.
  const alive = !exit || listTree(pid).length > 0;
  return {
    pid,
    state: alive ? "running" : "exited",
    exitCode: exit?.code ?? null,
    signal: exit?.signal ?? null,
    startup,
    startupMs: Math.round(performance.now() - started),
    transcript: transcript.finish(),
    detectedUrls: [...transcript.detected.urls],
    detectedPorts: [...transcript.detected.ports],
    logFile,
  };
}

/** Ends every background process this bridge process started (used at shutdown and by tests). */
export async function stopAllBackground(): Promise<void> {
  await Promise.all([...running.values()].map((p) => p.stop()));
}
