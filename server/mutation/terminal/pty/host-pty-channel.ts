// pty=1 on this host: node-pty opens the PTY and forks the sandbox launcher onto it (same Landlock rules, identity,
// scrubbed environment and tree ownership as every terminal command), with --tty so the launcher hands the terminal
// to the command's own session. The PTY's stream is read to its very end (pty-stream.ts), paused at the handle.
import { readFileSync } from "node:fs";
import { constants as osConstants } from "node:os";
import type { IPty } from "@lydell/node-pty";
import { launcherBinary, type LaunchPlan } from "../../../sandbox/launcher.js";
import { isGone, readStat } from "../process-tree.js";
import { resolveShell } from "../terminal-spawn.js";
import type { PtyChannel, PtyExit } from "./pty-channel.js";
import { keepOutputPastExit, readFlow, type ReadFlow } from "./pty-stream.js";

/** The terminal type the command sees: what the emulator understands. */
export const PTY_TERM = "xterm-256color";
/** How often a paused PTY's process is checked for having exited. */
const EXIT_WATCH_MS = 100;

export interface HostPtyOptions {
  command: string;
  /** Where the command runs (absolute); the plan's launcher walks to it itself. */
  cwd: string;
  env: Record<string, string>;
  plan?: LaunchPlan;
  rows: number;
  cols: number;
}

export async function spawnHostPty(options: HostPtyOptions): Promise<PtyChannel> {
  const { spawn } = await import("@lydell/node-pty");
  const shell = resolveShell();
  const shellArgv = [shell.file, ...shell.args, options.command];
  const binary = options.plan?.file ?? launcherBinary();
  const [file, args] = binary
    ? [binary, [...(options.plan?.args ?? ["--foreground"]), "--tty", "--", ...shellArgv]]
    : [shellArgv[0]!, shellArgv.slice(1)];
  const pty = spawn(file, args, {
    name: PTY_TERM,
    rows: options.rows,
    cols: options.cols,
    cwd: binary ? (options.plan?.spawnCwd ?? options.cwd) : options.cwd,
    env: { ...options.env, ...(options.plan?.env ?? {}), TERM: PTY_TERM },
    encoding: null,
  });
  return new HostPtyChannel(pty);
}

export class HostPtyChannel implements PtyChannel {
  readonly pid: number;
  private readonly flow: ReadFlow;
  private paused = false;
  /** The PTY's process has exited: its last output is read without pausing. */
  private exited = false;
  private readonly dataListeners: ((chunk: Buffer) => void)[] = [];

  constructor(private readonly pty: IPty) {
    this.pid = pty.pid;
    this.flow = readFlow(pty);
    const emit = (chunk: Buffer) => {
      for (const listener of this.dataListeners) listener(chunk);
    };
    keepOutputPastExit(pty, { onChunk: emit, onExitPending: () => this.flowAfterExit() });
    // encoding: null at spawn: node-pty hands Buffers, so a character split across reads stays whole.
    pty.onData((data: string | Buffer) => emit(typeof data === "string" ? Buffer.from(data) : data));
  }

  onData(listener: (chunk: Buffer) => void): void {
    this.dataListeners.push(listener);
  }

  onExit(listener: (exit: PtyExit) => void): void {
    // node-pty reports the exit once the stream has closed, and it closes only after every byte the program wrote
    // was read (pty-stream.ts).
    this.pty.onExit(({ exitCode, signal }) => {
      this.flowAfterExit();
      listener({ exitCode: signal ? null : exitCode, signal: signal ? signalName(signal) : null });
    });
  }

  write(data: string): void {
    this.pty.write(data);
  }

  resize(rows: number, cols: number): void {
    this.pty.resize(cols, rows);
  }

  pause(): void {
    if (this.paused || this.exited) return;
    this.paused = true;
    this.flow.stop();
    this.watchExitWhilePaused();
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.flow.start();
  }

  /** The terminal's foreground process group (what a shell runs now), else the command's. */
  signal(name: NodeJS.Signals): Promise<number | undefined> {
    const group = foregroundGroup(this.pid);
    if (group === undefined) return Promise.resolve(undefined);
    try {
      process.kill(-group, name);
      return Promise.resolve(group);
    } catch {
      return Promise.resolve(undefined);
    }
  }

  /** The launcher ends everything beneath it on SIGTERM; SIGKILL makes sure. */
  end(force: boolean): void {
    try {
      this.pty.kill(force ? "SIGKILL" : "SIGTERM");
    } catch {
      // Already gone.
    }
  }

  /**
   * node-pty reports the exit only once the PTY's stream has closed, and a stream whose reading is stopped never
   * sees the hang-up that closes it. So while paused, the process is watched, and once it is gone reading flows
   * again (what is left is the kernel's PTY buffer, a few KiB).
   */
  private watchExitWhilePaused(): void {
    const timer = setInterval(() => {
      if (!this.paused) return clearInterval(timer);
      if (!isGone(this.pid)) return;
      clearInterval(timer);
      this.flowAfterExit();
    }, EXIT_WATCH_MS);
  }

  /** The process has exited: its last output is read without pausing, however far the emulator is behind. */
  private flowAfterExit(): void {
    this.exited = true;
    this.resume();
  }
}

/**
 * The terminal's foreground process group: the tpgid of the process holding the terminal. The launcher gives the
 * terminal to its command (--tty), so that is the launcher's first child; a bare spawn holds it itself.
 */
function foregroundGroup(pid: number): number | undefined {
  const own = tpgidOf(pid);
  if (own !== undefined) return own;
  for (const child of childrenOf(pid)) {
    const group = tpgidOf(child);
    if (group !== undefined) return group;
  }
  return undefined;
}

function tpgidOf(pid: number): number | undefined {
  const stat = readStat(pid);
  return stat?.tpgid !== undefined && stat.tpgid > 0 ? stat.tpgid : undefined;
}

function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

function signalName(signal: number): string {
  const entry = Object.entries(osConstants.signals).find(([, value]) => value === signal);
  return entry?.[0] ?? `signal ${signal}`;
}
