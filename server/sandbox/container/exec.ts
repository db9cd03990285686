// One command in a project's sandbox container. The Docker exec API has no timeout and cannot signal an exec,
// so the command runs under coreutils `timeout -k` (which leads its own process group and ends that group); a
// small wrapper reports that group's pid and the exit code on stderr (stripped here), so the group can be
// ended from outside on abort or overrun, and the command is finished when its own process exits, even if
// something it left behind still holds the output open.
import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import { Writable } from "node:stream";
import { setTimeout as delay } from "node:timers/promises";
import type Dockerode from "dockerode";

export interface ContainerExecResult {
  /** The command's exit code; null when it had to be ended by restarting the container. */
  exitCode: number | null;
  /** The signal the timeout sent (SIGTERM, then SIGKILL after the grace), when it timed out. */
  signal: "SIGTERM" | "SIGKILL" | null;
  timedOut: boolean;
  durationMs: number;
  /** True when a process the command left behind still held stdout/stderr when it finished (it keeps running until the project's processes are ended). */
  outputHeld: boolean;
  /** True when the caller's signal ended the command. */
  aborted: boolean;
}

export interface RunExecOptions {
  container: Dockerode.Container;
  command: string;
  /** Absolute directory inside the container. */
  workingDir: string;
  env: Record<string, string>;
  user: string;
  timeoutMs: number;
  /** How long after SIGTERM the timeout sends SIGKILL. */
  killAfterMs: number;
  onStdout?: (chunk: Buffer) => void;
  onStderr?: (chunk: Buffer) => void;
  signal?: AbortSignal;
  /** Ends every process in the container: the last resort when the command outlives its timeout. */
  endEverything: () => Promise<void>;
  demux: (stream: NodeJS.ReadableStream, stdout: Writable, stderr: Writable) => void;
}

/** How often a running exec is inspected, in case the wrapper itself was killed before it could report. */
const POLL_MS = 250;
/** Output still in flight when the command exited is read for this long. */
const DRAIN_MS = 150;
/** Past timeout + kill grace the group is killed from outside (at once on abort); this much later, the container is restarted. */
const OVERRUN_MS = 2_000;
/** A marker line is short; anything longer without a newline is output. */
const MAX_MARKER_BYTES = 128;

/**
 * sh -c SCRIPT urlbridge-exec COMMAND. Stdin is /dev/null. The command runs in bash (else sh) under `timeout`,
 * in the background so the script can report timeout's pid (its process group) and, once it exits, the exit
 * code: Docker itself reports an exec as finished only after every holder of its output let go.
 */
function wrapperScript(nonce: string, timeoutMs: number, killAfterMs: number): string {
  const seconds = (ms: number) => `${Math.max(0.001, ms / 1000).toFixed(3)}s`;
  const marker = (kind: string, value: string) => `printf '\\036urlbridge-${nonce} ${kind} %s\\n' "${value}" >&2`;
  return [
    "exec </dev/null",
    "if command -v bash >/dev/null 2>&1; then s=bash; else s=sh; fi",
    `timeout -k ${seconds(killAfterMs)} ${seconds(timeoutMs)} "$s" -c "$1" &`,
    "p=$!",
    marker("pid", "$p"),
    // dash reports a killed job ("Killed") on stderr; that is ours, not the command's.
    '{ wait "$p"; } 2>/dev/null; c=$?',
    marker("exit", "$c"),
    'exit "$c"',
  ].join("\n");
}

/**
 * Passes a stream's bytes on, minus the wrapper's marker lines (\x1eurlbridge-NONCE KIND VALUE\n), which go to
 * `onMarker`. A partial marker at a chunk's end is held back until the next chunk shows what it is.
 */
export function createMarkerFilter(
  nonce: string,
  forward: (chunk: Buffer) => void,
  onMarker: (kind: string, value: string) => void,
) {
  const start = Buffer.from(`\x1eurlbridge-${nonce} `, "latin1");
  let pending = Buffer.alloc(0);
  const emit = (bytes: Buffer) => {
    if (bytes.length > 0) forward(Buffer.from(bytes));
  };
  return {
    write(chunk: Buffer) {
      let buffer = pending.length > 0 ? Buffer.concat([pending, chunk]) : chunk;
      pending = Buffer.alloc(0);
      for (;;) {
        const at = buffer.indexOf(start);
        if (at === -1) {
          // Hold back a tail that may be the beginning of a marker.
          const mark = buffer.lastIndexOf(0x1e);
          const partial =
            mark !== -1 &&
            buffer.length - mark < start.length &&
            start.subarray(0, buffer.length - mark).equals(buffer.subarray(mark));
          emit(partial ? buffer.subarray(0, mark) : buffer);
          if (partial) pending = Buffer.from(buffer.subarray(mark));
          return;
        }
        emit(buffer.subarray(0, at));
        const newline = buffer.indexOf(0x0a, at);
        if (newline === -1) {
          if (buffer.length - at > MAX_MARKER_BYTES) emit(buffer.subarray(at));
          else pending = Buffer.from(buffer.subarray(at));
          return;
        }
        const [kind = "", value = ""] = buffer
          .subarray(at + start.length, newline)
          .toString("latin1")
          .split(" ");
        onMarker(kind, value);
        buffer = buffer.subarray(newline + 1);
      }
    },
    flush() {
      emit(pending);
      pending = Buffer.alloc(0);
    },
  };
}

function sink(write: (chunk: Buffer) => void): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      write(chunk);
      done();
    },
  });
}

/** Kills the command's process group from a second exec (same user, so no privilege is needed). */
async function killGroup(container: Dockerode.Container, user: string, pid: number | undefined): Promise<void> {
  if (pid === undefined) return;
  try {
    // The shell's kill: slim images have no kill binary.
    const exec = await container.exec({
      Cmd: ["sh", "-c", `kill -KILL -${pid}`],
      User: user,
      AttachStdout: false,
      AttachStderr: false,
    });
    await exec.start({ Detach: true });
  } catch {
    // The container may be gone or restarting; the caller's next step (restart) covers it.
  }
}

export async function runExec(options: RunExecOptions): Promise<ContainerExecResult> {
  const { container, timeoutMs, killAfterMs, user } = options;
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  const nonce = randomBytes(8).toString("hex");
  let pid: number | undefined;
  let reportedExit: number | undefined;
  let onExit: () => void = () => {};
  const exited = new Promise<void>((resolve) => (onExit = resolve));
  const stdout = createMarkerFilter(
    nonce,
    (chunk) => options.onStdout?.(chunk),
    () => {},
  );
  const stderr = createMarkerFilter(
    nonce,
    (chunk) => options.onStderr?.(chunk),
    (kind, value) => {
      if (kind === "pid") pid = Number(value);
      if (kind === "exit") {
        reportedExit = Number(value);
        onExit();
      }
    },
  );

  const exec = await container.exec({
    Cmd: ["sh", "-c", wrapperScript(nonce, timeoutMs, killAfterMs), "urlbridge-exec", options.command],
    AttachStdin: false,
    AttachStdout: true,
    AttachStderr: true,
    Tty: false,
    WorkingDir: options.workingDir,
    Env: Object.entries(options.env).map(([key, value]) => `${key}=${value}`),
    User: user,
  });
  const stream = (await exec.start({ hijack: true, stdin: false })) as NodeJS.ReadableStream & { destroy(): void };
  let streamEnded = false;
  const ended = new Promise<void>((resolve) => {
    const finish = () => {
      streamEnded = true;
      resolve();
    };
    stream.on("end", finish);
    stream.on("close", finish);
    stream.on("error", finish);
  });
  options.demux(stream, sink(stdout.write), sink(stderr.write));

  const aborted = () => options.signal?.aborted === true;
  let exitCode: number | null = null;
  let killedAt: number | undefined;
  let restarted = false;
  let outputHeld: boolean;
  try {
    // Bounded: past timeout + grace + overrun (or on abort) the group is killed, and an overrun later the container restarts.
    for (;;) {
      await Promise.race(streamEnded ? [exited, delay(POLL_MS)] : [exited, ended, delay(POLL_MS)]);
      if (reportedExit !== undefined) {
        exitCode = reportedExit;
        break;
      }
      const info = await exec.inspect();
      if (!info.Running) {
        exitCode = info.ExitCode;
        break;
      }
      if (killedAt === undefined && (aborted() || elapsed() > timeoutMs + killAfterMs + OVERRUN_MS)) {
        killedAt = elapsed();
        await killGroup(container, user, pid);
      } else if (killedAt !== undefined && elapsed() - killedAt > OVERRUN_MS) {
        await options.endEverything();
        restarted = true;
        break;
      }
    }
    if (!streamEnded) await Promise.race([ended, delay(DRAIN_MS)]);
    outputHeld = !streamEnded;
  } finally {
    if (!streamEnded) stream.destroy();
    stdout.flush();
    stderr.flush();
  }
  const durationMs = Math.round(elapsed());
  const wasAborted = aborted();
  const timedOut =
    !wasAborted &&
    (restarted || killedAt !== undefined || (durationMs >= timeoutMs && (exitCode === 124 || exitCode === 137)));
  return {
    exitCode: restarted ? null : exitCode,
    signal: timedOut ? (exitCode === 124 ? "SIGTERM" : "SIGKILL") : null,
    timedOut,
    durationMs,
    outputHeld,
    aborted: wasAborted,
  };
}
