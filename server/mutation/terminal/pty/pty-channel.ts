// What a pty=1 process runs on, wherever it runs: a PTY on this host (host-pty-channel.ts, node-pty and the sandbox
// launcher) or a Docker exec with a TTY in the project's sandbox container (container-pty-channel.ts). PtyProcess
// renders, replays, waits and bounds the same way over either.

export interface PtyExit {
  exitCode: number | null;
  signal: string | null;
}

export interface PtyChannel {
  /** The id the registries know it by: the launcher's pid on this host, a handle in container mode. */
  readonly pid: number;
  /** Every byte the program wrote, in order, until the exit is reported. */
  onData(listener: (chunk: Buffer) => void): void;
  /** Once, after the last output was handed over. */
  onExit(listener: (exit: PtyExit) => void): void;
  write(data: string): void;
  resize(rows: number, cols: number): void;
  /** Stops reading, so a flood waits at its source (the program blocks on its write) until resume(). */
  pause(): void;
  resume(): void;
  /** Sends a signal to the terminal's foreground process group; answers the group, undefined when none holds it. */
  signal(name: NodeJS.Signals): Promise<number | undefined>;
  /** Ends the whole tree: asks first (force false), then makes sure (force true, after a grace). */
  end(force: boolean): void;
}
