// pty=1 in the project's sandbox container (URLBRIDGE_SANDBOX=container): the command runs on a Docker exec's TTY
// (server/sandbox/container/tty-exec.ts) with the job marker every container command carries, so what it starts
// can be found in the container's /proc. The exec API cannot signal an exec: a signal for the foreground group
// and the end of the tree are each a short second exec (terminal-container-job.ts), run as the same agent user.
import { randomBytes } from "node:crypto";
import type { TtyExec } from "../../../sandbox/container/manager.js";
import {
  commandEnv,
  signalJobTerminal,
  sweepJob,
  type CommandContext,
  type ContainerCommandOptions,
} from "../terminal-container-job.js";
import type { PtyChannel, PtyExit } from "./pty-channel.js";
import { PTY_TERM } from "./host-pty-channel.js";

export interface ContainerPtyChannelOptions {
  /** The id the registries know it by (ContainerTerminal's handles: never a host pid). */
  handle: number;
  exec: TtyExec;
  /** Signals the foreground group of the job's terminal; answers the group, undefined when none holds it. */
  signalGroup(signal: string): Promise<number | undefined>;
  /** Ends every process of the job. Never rejects. */
  endJob(): Promise<unknown>;
}

/**
 * The exec's hijacked connection as a PtyChannel. Writes and resizes go out in the order they were made (a resize
 * is an API call, a write a socket write); a signal waits for both. Pausing stops reading the socket, so Docker's
 * copy, then the TTY, then the program block. The exit is reported after the stream ended (Docker ends it once
 * the command has exited and its output is copied, at most 2 s later when something it left still holds the
 * TTY), with the exit code from the exec's inspection, once what the command left behind is ended too.
 */
export class ContainerPtyChannel implements PtyChannel {
  readonly pid: number;
  private readonly dataListeners: ((chunk: Buffer) => void)[] = [];
  private readonly exitListeners: ((exit: PtyExit) => void)[] = [];
  private exit: PtyExit | undefined;
  private finishing = false;
  private ops: Promise<void> = Promise.resolve();

  constructor(private readonly options: ContainerPtyChannelOptions) {
    this.pid = options.handle;
    const { stream } = options.exec;
    stream.on("data", (chunk: Buffer) => {
      for (const listener of this.dataListeners) listener(chunk);
    });
    const finish = () => void this.finish();
    stream.once("end", finish);
    stream.once("close", finish);
    // A broken connection: the exec is inspected like after an end.
    stream.once("error", finish);
  }

  onData(listener: (chunk: Buffer) => void): void {
    this.dataListeners.push(listener);
  }

  onExit(listener: (exit: PtyExit) => void): void {
    const { exit } = this;
    if (exit) queueMicrotask(() => listener(exit));
    else this.exitListeners.push(listener);
  }

  write(data: string): void {
    this.enqueue(async () => {
      const { stream } = this.options.exec;
      if (!stream.destroyed && stream.writable) stream.write(data);
    });
  }

  resize(rows: number, cols: number): void {
    this.enqueue(() => this.options.exec.resize(rows, cols));
  }

  pause(): void {
    const { stream } = this.options.exec;
    if (!stream.isPaused()) stream.pause();
  }

  resume(): void {
    const { stream } = this.options.exec;
    if (stream.isPaused()) stream.resume();
  }

  async signal(name: NodeJS.Signals): Promise<number | undefined> {
    await this.ops;
    if (this.exit) return undefined;
    return this.options.signalGroup(name.replace(/^SIG/, ""));
  }

  /** Ends the job's processes (the exec's shell among them, which ends the stream); forced, drops the connection too. */
  end(force: boolean): void {
    if (this.exit) return;
    void this.options.endJob();
    if (force) this.options.exec.stream.destroy();
  }

  private enqueue(op: () => Promise<void>): void {
    // A failed resize or write (the exec is gone) leaves the exit to be reported by the stream's end.
    this.ops = this.ops.then(op).catch(() => undefined);
  }

  private async finish(): Promise<void> {
    if (this.finishing) return;
    this.finishing = true;
    const exitCode = await this.options.exec.exitCode();
    // Nothing the command left behind (a background job, setsid) outlives its terminal, as on the host.
    await this.options.endJob();
    this.options.exec.stream.destroy();
    const exit: PtyExit = { exitCode, signal: null };
    this.exit = exit;
    for (const listener of this.exitListeners.splice(0)) listener(exit);
  }
}

export interface ContainerPtyOptions extends ContainerCommandOptions {
  rows: number;
  cols: number;
}

/** Starts the command on a TTY in the project's container (ContainerTerminal.openPty). */
export async function openPtyInContainer(context: CommandContext, options: ContainerPtyOptions): Promise<PtyChannel> {
  const { containers } = context;
  const { owner, root } = options;
  const job = randomBytes(8).toString("hex");
  const exec = await containers.openTty({
    projectId: owner.projectId,
    root,
    command: options.command,
    cwd: options.cwd || ".",
    env: { ...commandEnv(options, job), TERM: PTY_TERM },
    rows: options.rows,
    cols: options.cols,
  });
  return new ContainerPtyChannel({
    handle: context.handle,
    exec,
    signalGroup: (signal) => signalJobTerminal(containers, owner.projectId, root, job, signal),
    endJob: () => sweepJob(containers, owner.projectId, root, job, true),
  });
}
