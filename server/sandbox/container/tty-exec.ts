// One interactive command in a project's sandbox container: a Docker exec with a TTY and stdin attached. The
// exec's TTY is the command's controlling terminal (Docker starts it in a session of its own), so its line
// discipline turns Ctrl-C into SIGINT for the foreground group and a resize into SIGWINCH, as on the host.
import type { Duplex } from "node:stream";
import type Dockerode from "dockerode";

export interface TtyExecOptions {
  container: Dockerode.Container;
  command: string;
  /** Absolute directory inside the container. */
  workingDir: string;
  env: Record<string, string>;
  user: string;
  rows: number;
  cols: number;
}

export interface TtyExec {
  /** The terminal's bytes, both ways: what the program writes, and what is typed into it. */
  stream: Duplex;
  /** Resizes the exec's TTY (the program gets SIGWINCH). */
  resize(rows: number, cols: number): Promise<void>;
  /** The exit code, once the stream has ended; null when the exec is gone (its container was removed). */
  exitCode(): Promise<number | null>;
}

/**
 * sh -c SCRIPT urlbridge-pty COMMAND ROWS COLS. The exec API of engines before API 1.42 takes no initial size and
 * a resize can only follow the start, racing the program's first look at its size: the terminal is sized here,
 * before the command starts. The command runs in bash, else sh, as every container command does.
 */
export const TTY_SCRIPT = [
  'stty rows "$2" cols "$3" 2>/dev/null',
  'if command -v bash >/dev/null 2>&1; then exec bash -c "$1"; fi',
  'exec sh -c "$1"',
].join("\n");

export async function openTtyExec(options: TtyExecOptions): Promise<TtyExec> {
  const exec = await options.container.exec({
    Cmd: ["sh", "-c", TTY_SCRIPT, "urlbridge-pty", options.command, String(options.rows), String(options.cols)],
    AttachStdin: true,
    AttachStdout: true,
    AttachStderr: true,
    Tty: true,
    WorkingDir: options.workingDir,
    Env: Object.entries(options.env).map(([key, value]) => `${key}=${value}`),
    User: options.user,
  });
  // With a TTY the hijacked connection carries the raw terminal bytes (no stdout/stderr framing to demux).
  const stream = (await exec.start({ hijack: true, stdin: true, Tty: true })) as Duplex;
  return {
    stream,
    resize: async (rows, cols) => void (await exec.resize({ h: rows, w: cols })),
    exitCode: async () => {
      try {
        return (await exec.inspect()).ExitCode;
      } catch {
        return null;
      }
    },
  };
}
