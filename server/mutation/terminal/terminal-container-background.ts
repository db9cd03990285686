// A bg=1 terminal command in the project's sandbox container (terminal-container.ts dispatches it): launched
// without awaiting its end, its start-up window watched as on the native path, its output logged to a bounded
// file in the container's /tmp, and the job followed while its shell or anything carrying its marker runs.
import { randomBytes } from "node:crypto";
import { setTimeout as delay } from "node:timers/promises";
import { ErrorCode, ToolError } from "../../errors.js";
import { createMarkerFilter } from "../../sandbox/container/exec.js";
import { StartupTranscript, watchStartup } from "./startup-transcript.js";
import {
  MAX_BACKGROUND_LOG_BYTES,
  MAX_BACKGROUND_LOG_FILES,
  MAX_BACKGROUND_PROCESSES,
  type LaunchResult,
} from "./terminal-background.js";
import {
  commandEnv,
  displayCwd,
  JOB_VARIABLE,
  sweepJob,
  type CommandContext,
  type ContainerLaunchOptions,
} from "./terminal-container-job.js";

/** A bg=1 process has no timeout; coreutils timeout still needs one: a year. */
const BACKGROUND_TIMEOUT_MS = 365 * 24 * 3600 * 1000;
/** After a bg=1 shell exited, how long its last output may take to arrive. */
const EXIT_OUTPUT_GRACE_MS = 250;
/** How often a bg=1 job whose shell exited is checked for processes still carrying its marker. */
const LEFTOVER_POLL_MS = 5_000;

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

export async function launchBackgroundInContainer(
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
