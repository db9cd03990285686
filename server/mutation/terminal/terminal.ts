// terminal (/x): one shell command in the project, as a journaled intent. Foreground runs hold one of the
// machine-wide gate's slots until they finish or time out; bg=1 launches a long-running process and reports
// its start-up. Protocol: docs/PROTOCOL.md §6.
import fs from "node:fs";
import { stat } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { ErrorCode, ToolError } from "../../errors.js";
import { defineTool, type InterruptedIntent, type ToolContext } from "../../kernel/tool/definition.js";
import { cwdDepthOf, guardCommand } from "../../sandbox/command-guard.js";
import { buildChildEnv } from "../../sandbox/env-scrub.js";
import { resolveInsideRoot } from "../../sandbox/paths.js";
import { runtimeOf } from "../journal/context.js";
import { journalControls } from "../journal/controls.js";
import { killTree, processStartTicks } from "./process-tree.js";
import { growthExceeded, type GrowthOverrun } from "../growth-budget.js";
import type { MemoryOverrun } from "./memory-watchdog.js";
import { interruptedFailure } from "../journal/recovery.js";
import { BLOB_ID_PATTERN, MAX_CHUNKS_PER_BLOB } from "../staging/staging.js";
import { STARTUP_WINDOW_MS } from "./startup-transcript.js";
import {
  backgroundLogDir,
  launchBackground,
  launcherRefused,
  spawnerLost,
  type LaunchResult,
} from "./terminal-background.js";
import type { BoundedText } from "./terminal-output.js";
import {
  DEFAULT_TIMEOUT_MS,
  MAX_TIMEOUT_MS,
  MIN_TIMEOUT_MS,
  runForeground,
  type ForegroundResult,
} from "./terminal-run.js";
import { treeEndsWithBridge } from "./terminal-spawn.js";
import { checkpointed, type CheckpointNote } from "./terminal-checkpoint.js";
import { MAX_PTY_COLS, MAX_PTY_ROWS } from "./pty/pty-limits.js";
import { launchPty, ptyStartOutput } from "./pty/pty-launch.js";

const schema = z.object({
  command: z.string().optional(),
  blob: z.string().regex(BLOB_ID_PATTERN, "blob ids use letters, digits, . _ - (1-64)").optional(),
  count: z.number().int().min(1).max(MAX_CHUNKS_PER_BLOB).optional(),
  cwd: z.string().optional(),
  timeout: z.number().int().min(MIN_TIMEOUT_MS).max(MAX_TIMEOUT_MS).optional(),
  /** Ends one of this session's bg=1 processes (the `stop` URL a launch answers); the bridge does it, not a shell. */
  stop: z.number().int().positive().optional(),
  // bg=0 means the same as no bg at all, so both spellings share one call id.
  bg: z
    .boolean()
    .optional()
    .transform((v) => (v ? true : undefined)),
  /** pty=1: an interactive process on a pseudo-terminal (rows x cols), typed into with /i and read with /m. */
  pty: z
    .boolean()
    .optional()
    .transform((v) => (v ? true : undefined)),
  rows: z.number().int().min(2).max(MAX_PTY_ROWS).optional(),
  cols: z.number().int().min(10).max(MAX_PTY_COLS).optional(),
  ...journalControls,
});

type TerminalArgs = z.infer<typeof schema>;

/** Present beside a stream only when its output was cut: the notice inside the text says where. */
const truncation = z
  .strictObject({
    bytes: z.number().int().describe("Bytes the stream produced in total."),
    omittedBytes: z.number().int().describe("Bytes left out between the kept head and tail."),
  })
  .optional()
  .describe("Present when the output was cut; redirect it to a file and read that with /r for all of it.");

const cwdField = z.string().describe("Where the command ran: /project or a folder below it.");

/** A foreground run that finished by itself: a non-zero exit is a result, not an error. */
export const foregroundOutput = z.strictObject({
  ok: z.literal(true),
  mode: z.literal("foreground"),
  exitCode: z.number().int().nullable().describe("The shell's exit status; null when a signal ended it (see signal)."),
  signal: z.string().optional().describe("The signal that ended the shell (e.g. SIGKILL), when one did."),
  durationMs: z.number().int(),
  cwd: cwdField,
  stdout: z
    .string()
    .describe("Standard output as UTF-8; when long, its head and tail around a one-line omission notice."),
  stdoutTruncated: truncation,
  stderr: z.string().describe("Standard error, bounded like stdout."),
  stderrTruncated: truncation,
  leftoversKilled: z
    .number()
    .int()
    .optional()
    .describe("Processes the command left running after its shell exited, which were ended; start servers with bg=1."),
  checkpointNotice: z.string().optional().describe("What the change set could not record of this command's changes."),
});
export type ForegroundOutput = z.infer<typeof foregroundOutput>;

/** A bg=1 launch whose start-up window closed with the process alive, or after it exited with status 0. */
export const backgroundOutput = z.strictObject({
  ok: z.literal(true),
  mode: z.literal("background"),
  pid: z
    .number()
    .int()
    .describe(
      "The process tree's id: stop it with the `stop` URL (/x?stop=<pid>). In container mode a bridge handle, not a host pid.",
    ),
  processState: z
    .enum(["running", "exited"])
    .describe(
      "running: alive when the start-up window closed (stop is present); exited: finished with status 0 during start-up.",
    ),
  exitCode: z
    .number()
    .int()
    .nullable()
    .optional()
    .describe(
      "processState exited only: the exit status (always 0 here; a failed start-up is background_start_failed).",
    ),
  signal: z
    .string()
    .optional()
    .describe(
      "processState exited only, when a signal ended it (never in a success: that is background_start_failed).",
    ),
  startup: z
    .enum(["exited", "announced", "window"])
    .describe(
      "What closed the start-up window: the process exited, it announced an address and went quiet, or the window elapsed.",
    ),
  startupMs: z.number().int(),
  cwd: cwdField,
  detectedUrls: z.array(z.string()).describe("Local URLs the start-up output announced (http://localhost:5173/...)."),
  detectedPorts: z.array(z.number().int()).describe("Local ports the start-up output announced."),
  transcript: z
    .string()
    .describe("stdout and stderr of the start-up window, interleaved as they arrived; bounded like stdout."),
  transcriptTruncated: truncation,
  logFile: z
    .string()
    .describe(
      "Where the rest of the output goes (rotated, bounded): read it with /x?raw=tail+<logFile>. In container mode a path inside the project's container.",
    ),
  stop: z.string().optional().describe("processState running only: exact URL that ends the whole process tree."),
});
export type BackgroundOutput = z.infer<typeof backgroundOutput>;

/** /x?stop=<pid>: one of this session's bg=1 trees was ended. */
export const stopOutput = z.strictObject({
  ok: z.literal(true),
  mode: z.literal("stop"),
  pid: z.number().int(),
  stopped: z.literal(true),
  command: z.string().describe("The stopped process's command (its first 200 characters)."),
  durationMs: z.number().int().describe("How long ending the tree took."),
});
export type StopOutput = z.infer<typeof stopOutput>;

/** What a successful /x answers (before the journal's callId and state), by mode; container mode answers the same shapes. */
export const terminalOutput = z.discriminatedUnion("mode", [
  foregroundOutput,
  backgroundOutput,
  stopOutput,
  ptyStartOutput,
]);
export type TerminalOutput = z.infer<typeof terminalOutput>;

/**
 * wait= for bg=1 when none is given: the whole start-up window plus room for spawning (and a sandbox's container)
 * and the output grace after an early exit, so a server that announces late in its window still answers at once.
 */
export const BACKGROUND_DEFAULT_WAIT_MS = STARTUP_WINDOW_MS + 2000;

/** The longest command a shell can be handed: Linux's MAX_ARG_STRLEN (32 pages) less the terminating NUL. */
export const MAX_COMMAND_BYTES = 128 * 1024 - 1;

/** Failures after which the command had (or may have had) effects. */
const COMMAND_RAN_CODES = new Set<string>([
  ErrorCode.commandTimedOut,
  ErrorCode.memoryBudgetExceeded,
  ErrorCode.growthBudgetExceeded,
  ErrorCode.backgroundStartFailed,
  ErrorCode.interrupted,
]);

export const terminalTool = defineTool({
  id: "terminal",
  route: "x",
  longRoutes: ["exec", "shell"],
  capability: "mutation",
  permission: "terminal",
  description:
    "Run a shell command in the project: foreground with timeout= (ms), bg=1 to start a server, pty=1 for an interactive terminal.",
  example: "/x?raw=npm+test",
  schema,
  output: terminalOutput,
  url: { aliases: { cmd: "command" }, rawField: "command" },
  journal: {
    // stop=<pid> ends a background process and needs no command.
    stagedContent: [{ blob: "blob", count: "count", into: "command", required: (args) => args.stop === undefined }],
    serialize: false,
    // A command that ran may have changed files whatever its exit code; a refused or rejected one changed nothing.
    bumpsEpoch: (body) =>
      body.ok ||
      (COMMAND_RAN_CODES.has(String(body.errorCode)) &&
        (body.errorDetail as { started?: boolean } | undefined)?.started !== false),
    repeatOnStateChange: true,
    // bg=1 answers after its start-up window: wait for it, so the first answer carries detectedUrls (issue 14).
    defaultWaitMs: (args) => (args.bg ? BACKGROUND_DEFAULT_WAIT_MS : undefined),
    admit: (args, ctx) => admitTerminal(args as TerminalArgs, ctx),
    recover: recoverTerminal,
  },
  execute: executeTerminal,
});

interface PreparedCommand {
  command: string;
  cwd: { absolute: string; display: string };
}

/** Checks the request before it may wait for a slot or run: a refused command never queues. */
async function prepareCommand(args: TerminalArgs, ctx: ToolContext): Promise<PreparedCommand> {
  if (args.stop !== undefined) {
    if (args.command !== undefined || args.bg || args.pty || args.timeout !== undefined || args.cwd !== undefined) {
      throw new ToolError(
        ErrorCode.conflictingParameters,
        "stop= ends a background process by itself; drop the command, bg=, timeout= and cwd=.",
        {
          detail: { parameters: ["stop", "command", "bg", "timeout", "cwd"] },
        },
      );
    }
    return { command: "", cwd: { absolute: ctx.project.root, display: "/project" } };
  }
  const command = args.command ?? "";
  if (command.trim() === "" || command.includes("\0")) {
    throw new ToolError(
      ErrorCode.invalidParameter,
      "The command is empty or contains NUL. Put it after raw= (last), e.g. /x?raw=npm+test.",
      {
        detail: { parameter: "command" },
        retryable: false,
      },
    );
  }
  const bytes = Buffer.byteLength(command, "utf8");
  if (bytes > MAX_COMMAND_BYTES) {
    // The shell gets the command as one argument (sh -c <command>), and the kernel refuses a longer one (E2BIG).
    throw new ToolError(
      ErrorCode.invalidParameter,
      `The command is ${bytes} bytes; a shell command can be at most ${MAX_COMMAND_BYTES} (the kernel's limit for one argument). Write it to a script file with /w (stage it with /s if it is long), then run the script: /x?raw=sh+script.sh.`,
      {
        detail: { parameter: "command", bytes, maxBytes: MAX_COMMAND_BYTES },
        retryable: false,
        agentAction: "correct_request",
      },
    );
  }
  if (args.pty && (args.bg || args.timeout !== undefined)) {
    throw new ToolError(
      ErrorCode.conflictingParameters,
      "pty=1 starts an interactive process that runs until it exits or is stopped: drop bg= and timeout=.",
      { detail: { parameters: ["pty", "bg", "timeout"] }, repair: ctx.urls.repair({ drop: ["bg", "timeout"] }) },
    );
  }
  if (!args.pty && (args.rows !== undefined || args.cols !== undefined)) {
    throw new ToolError(
      ErrorCode.conflictingParameters,
      "rows= and cols= size a pty=1 terminal; add pty=1 or drop them.",
      {
        detail: { parameters: ["rows", "cols", "pty"] },
        repair: ctx.urls.repair({ drop: ["rows", "cols"] }),
      },
    );
  }
  if (args.bg && args.timeout !== undefined) {
    throw new ToolError(
      ErrorCode.conflictingParameters,
      "timeout= applies to foreground runs; a bg=1 process runs until it exits or is stopped. Drop timeout=.",
      {
        detail: { parameters: ["bg", "timeout"] },
        repair: ctx.urls.repair({ drop: ["timeout"] }),
      },
    );
  }
  const over = runtimeOf(ctx).terminal.growth.exceeded(ctx.session.id);
  if (over) throw growthExceeded(over, undefined, { started: false });
  const cwd = await resolveWorkingDirectory(ctx, args.cwd);
  // The guard needs the starting depth below /project to tell "../x" inside the project from a climb out of it.
  guardCommand(command, { cwdDepth: cwdDepthOf(cwd.display) });
  return { command, cwd };
}

/** Foreground commands take a slot of the bridge's gate before they start; the intent is pending until then. */
async function admitTerminal(args: TerminalArgs, ctx: ToolContext): Promise<(() => void) | undefined> {
  await prepareCommand(args, ctx);
  if (args.bg || args.pty || args.stop !== undefined) return undefined;
  const { gate } = runtimeOf(ctx).terminal;
  try {
    return await gate.acquire({
      signal: ctx.signal,
      // A queued command waits at most its own timeout, then answers terminal_busy (it never ran).
      maxWaitMs: args.timeout ?? DEFAULT_TIMEOUT_MS,
      onQueued: (position) => ctx.intent?.progress({ phase: "queued", position, slots: gate.slots }),
    });
  } catch (error) {
    // This record replays as failed forever; a retry needs a fresh identity.
    const retry = ctx.intent?.retryUrl();
    const extra = retry ? { retry } : {};
    if (ctx.signal.aborted) {
      throw new ToolError(
        ErrorCode.interrupted,
        "The bridge shut down while this command waited for a terminal slot; nothing ran. Fetch retry to run it.",
        {
          detail: { phase: "pending", started: false },
          extra,
        },
      );
    }
    if (error instanceof ToolError && error.code === ErrorCode.terminalBusy) {
      throw new ToolError(error.code, error.message, {
        detail: error.detail,
        retryable: true,
        agentAction: "wait_and_retry",
        extra,
      });
    }
    throw error;
  }
}

async function executeTerminal(args: TerminalArgs, ctx: ToolContext): Promise<TerminalOutput> {
  if (args.stop !== undefined) return stopBackground(args.stop, ctx);
  const { command, cwd } = await prepareCommand(args, ctx);
  const { env } = buildChildEnv();
  const owner = { sessionId: ctx.session.id, projectId: ctx.project.id, root: ctx.project.root };
  const relative = path.relative(ctx.project.root, cwd.absolute);
  const { terminal, sandbox } = runtimeOf(ctx);
  if (terminal.container && args.pty) {
    throw new ToolError(
      ErrorCode.sandboxUnavailable,
      "pty=1 is not available in container sandbox mode yet; run the command in the foreground or with bg=1.",
      { detail: { reason: "pty_in_container_mode" }, retryable: false },
    );
  }
  terminal.growth.beginCommand(owner.sessionId, owner.root);
  if (terminal.container) {
    // URLBRIDGE_SANDBOX=container: the project's own warm container runs it (server/mutation/terminal/terminal-container.ts).
    if (args.bg)
      return reportBackground(
        await terminal.container.launchBackground({
          command,
          root: ctx.project.root,
          cwd: relative,
          owner,
          signal: ctx.signal,
        }),
        ctx,
        cwd.display,
      );
    const containerTimeoutMs = args.timeout ?? DEFAULT_TIMEOUT_MS;
    ctx.intent?.progress({ phase: "running", since: new Date().toISOString() });
    const { container } = terminal;
    const ran = await checkpointed(ctx, () =>
      container.runForeground({
        command,
        root: ctx.project.root,
        cwd: relative,
        owner,
        timeoutMs: containerTimeoutMs,
        signal: ctx.signal,
      }),
    );
    return reportForeground(ran, containerTimeoutMs, cwd.display, limitsAfter(ctx, ran));
  }
  // The project's bg=1 logs: readable by its own commands (tail), by no other project's.
  const logDir = sandbox ? backgroundLogDir(ctx.project.id) : undefined;
  const identity = sandbox?.identityFor(ctx.project.root);
  const logReader = identity ? { gid: identity.gid } : undefined;
  const plan = sandbox?.plan(
    { id: ctx.project.id, root: ctx.project.root },
    relative,
    // A pty=1 tree ends with its command, like a foreground one: nothing it left behind outlives the terminal.
    !args.bg,
    logDir && fs.existsSync(logDir) ? [logDir] : [],
  );
  if (args.pty) return launchPty({ command, cwd, env, plan, rows: args.rows, cols: args.cols }, ctx);
  if (args.bg) {
    return reportBackground(
      await launchBackground({
        command,
        cwd: cwd.absolute,
        env,
        plan,
        owner,
        processes: terminal.processes,
        logDir,
        logReader,
        signal: ctx.signal,
      }),
      ctx,
      cwd.display,
    );
  }
  const timeoutMs = args.timeout ?? DEFAULT_TIMEOUT_MS;
  ctx.intent?.progress({ phase: "running", since: new Date().toISOString() });
  const result = await checkpointed(ctx, () =>
    runForeground({
      command,
      cwd: cwd.absolute,
      env,
      plan,
      owner,
      processes: terminal.processes,
      timeoutMs,
      signal: ctx.signal,
      // A durable commit per command, worth it only when a crash would leave the tree running (a bare spawn).
      ...(treeEndsWithBridge(plan) ? {} : { onSpawn: (pid: number) => checkpointProcess(ctx, pid) }),
    }),
  );
  return reportForeground(result, timeoutMs, cwd.display, limitsAfter(ctx, result));
}

/** What the agent limits say about a finished foreground command: the overrun that ended it, or the growth it added. */
function limitsAfter(ctx: ToolContext, result: ForegroundResult): LimitOutcome {
  const { terminal } = runtimeOf(ctx);
  // The command's own writes, measured now rather than at the next pass (a short command may fall between two).
  terminal.growth.meterTerminal(terminal.processes);
  const growth = terminal.growth.exceeded(ctx.session.id);
  if (result.limitEnded === "memory") {
    const memory = terminal.watchdog?.overrunOf(ctx.session.id);
    if (memory) return { memory };
  }
  return growth ? { growth } : {};
}

/** /x?stop=<pid>: ends one of this session's own background trees (signal scoping keeps a later command from it). */
async function stopBackground(pid: number, ctx: ToolContext): Promise<StopOutput> {
  const tree = runtimeOf(ctx).terminal.processes.get(pid);
  if (!tree || tree.kind === "foreground" || tree.owner?.sessionId !== ctx.session.id) {
    throw new ToolError(
      ErrorCode.processNotFound,
      `No background or pty=1 process ${pid} of this session is running: it has ended already, or another session started it. Nothing was stopped.`,
      {
        detail: { pid },
        retryable: false,
      },
    );
  }
  const started = performance.now();
  await tree.stop("stopped");
  return {
    ok: true as const,
    mode: "stop",
    pid,
    stopped: true,
    command: tree.command.slice(0, 200),
    durationMs: Math.round(performance.now() - started),
  };
}

interface ProcessCheckpoint {
  pid: number;
  startTicks: number;
}

/** Records which process tree this intent owns, so that recovery after a crash can end it instead of orphaning it. */
function checkpointProcess(ctx: ToolContext, pid: number): void {
  const startTicks = processStartTicks(pid);
  if (startTicks === undefined) return;
  try {
    ctx.intent?.checkpoint({ pid, startTicks } satisfies ProcessCheckpoint);
  } catch (error) {
    // The command runs either way; without the checkpoint a crash merely leaves it orphaned.
    ctx.mutation?.log.warn("could not checkpoint a terminal process", {
      error: error instanceof Error ? error.message : String(error),
    });
  }
}

/**
 * A foreground command the previous process was running: never re-run; if its process tree outlived the crash
 * (same pid and start time), end it, since its output is lost and it would escape the gate's count.
 */
async function recoverTerminal(intent: InterruptedIntent) {
  const checkpoint = intent.checkpoint as Partial<ProcessCheckpoint> | undefined;
  let orphanEnded = false;
  if (intent.phase === "running" && typeof checkpoint?.pid === "number" && checkpoint.startTicks !== undefined) {
    if (processStartTicks(checkpoint.pid) === checkpoint.startTicks) {
      await killTree(checkpoint.pid);
      orphanEnded = true;
    }
  }
  return interruptedFailure({ tool: intent.tool }, intent.phase, intent.phase === "running" ? { orphanEnded } : {});
}

async function resolveWorkingDirectory(ctx: ToolContext, input: string | undefined) {
  const target = resolveInsideRoot(ctx.project.root, input ?? ".", { allowMissing: false });
  if (!(await stat(target.absolute)).isDirectory()) {
    throw new ToolError(ErrorCode.notADirectory, `cwd "${input}" is a file; give a directory inside /project.`, {
      detail: { cwd: target.display },
    });
  }
  return target;
}

type OutputFields<N extends string> = { [K in N]: string } & {
  [K in `${N}Truncated`]?: { bytes: number; omittedBytes: number };
};

/** Output fields: the text, plus byte counts only when something was left out. */
function outputFields<N extends string>(name: N, output: BoundedText): OutputFields<N> {
  return {
    [name]: output.text,
    ...(output.truncated ? { [`${name}Truncated`]: { bytes: output.bytes, omittedBytes: output.omittedBytes } } : {}),
  } as OutputFields<N>;
}

interface LimitOutcome {
  memory?: MemoryOverrun;
  growth?: GrowthOverrun;
}

function reportForeground(
  result: ForegroundResult & CheckpointNote,
  timeoutMs: number,
  cwd: string,
  limits: LimitOutcome = {},
): ForegroundOutput {
  if (result.launcherError) throw launcherRefused(result.launcherError);
  const common = {
    exitCode: result.exitCode,
    ...(result.signal ? { signal: result.signal } : {}),
    durationMs: result.durationMs,
    cwd,
    ...outputFields("stdout", result.stdout),
    ...outputFields("stderr", result.stderr),
    ...(result.leftoversKilled > 0 ? { leftoversKilled: result.leftoversKilled } : {}),
    ...(result.checkpointNotice ? { checkpointNotice: result.checkpointNotice } : {}),
  };
  if (limits.memory) throw memoryExceeded(limits.memory, common);
  if (limits.growth) throw growthExceeded(limits.growth, undefined, { started: true, output: common });
  if (result.spawnerLost && !result.aborted && !result.scopeEnded && !result.timedOut) {
    throw spawnerLost(common);
  }
  if (result.aborted) {
    throw new ToolError(
      ErrorCode.interrupted,
      "The bridge shut down while the command ran; its process tree was ended. Check the project state before running it again.",
      {
        detail: { started: true },
        extra: common,
      },
    );
  }
  if (result.scopeEnded) {
    throw new ToolError(
      ErrorCode.interrupted,
      "The command's process tree was ended because its session or project ended (disabled, rotated, deleted, or terminal permission removed).",
      {
        detail: { started: true, reason: "scope_ended" },
        retryable: false,
        extra: common,
      },
    );
  }
  if (result.timedOut) {
    throw new ToolError(
      ErrorCode.commandTimedOut,
      `The command ran longer than timeout=${timeoutMs} ms; its whole process tree was ended. Raise timeout= (max ${MAX_TIMEOUT_MS}), narrow the command, or start long-running work with bg=1.`,
      { detail: { timeoutMs }, agentAction: "correct_request", extra: { ...common, timedOut: true } },
    );
  }
  return { ok: true as const, mode: "foreground", ...common };
}

const mib = (bytes: number) => `${Math.round(bytes / (1024 * 1024))} MiB`;

/** The answer of a command the memory watchdog ended: what it measured, the budget, and who can change what. */
function memoryExceeded(over: MemoryOverrun, common: Record<string, unknown>): ToolError {
  const scratch =
    over.scratchBytes > 0 ? ` plus ${mib(over.scratchBytes)} held in the scratch tmpfs ($HOME, $TMPDIR)` : "";
  return new ToolError(
    ErrorCode.memoryBudgetExceeded,
    `This session's processes used ${mib(over.processBytes)}${scratch}, past its memory budget of ${mib(over.budgetBytes)}: every process of the session was ended. Use less memory at once (fewer parallel jobs, smaller inputs), delete what you no longer need from $TMPDIR, or ask the operator to raise URLBRIDGE_AGENT_MEMORY_MB.`,
    {
      detail: {
        started: true,
        budgetBytes: over.budgetBytes,
        processBytes: over.processBytes,
        scratchBytes: over.scratchBytes,
        processes: over.processes,
      },
      extra: common,
    },
  );
}

function reportBackground(result: LaunchResult, ctx: ToolContext, cwd: string): BackgroundOutput {
  const common = {
    mode: "background" as const,
    pid: result.pid,
    processState: result.state,
    ...(result.state === "exited"
      ? { exitCode: result.exitCode, ...(result.signal ? { signal: result.signal } : {}) }
      : {}),
    startup: result.startup,
    startupMs: result.startupMs,
    cwd,
    detectedUrls: result.detectedUrls,
    detectedPorts: result.detectedPorts,
    ...outputFields("transcript", result.transcript),
    logFile: result.logFile,
  };
  const died = result.state === "exited" && (result.exitCode !== 0 || result.signal !== null);
  if (died) {
    throw new ToolError(
      ErrorCode.backgroundStartFailed,
      "The background process exited during start-up. The transcript shows its last output; fetch repair to run the same command in the foreground and see the full result.",
      {
        agentAction: "run_foreground",
        repair: ctx.urls.repair({ drop: ["bg", "call"] }),
        extra: common,
      },
    );
  }
  return {
    ok: true as const,
    ...common,
    ...(result.state === "running" ? { stop: ctx.urls.to("m", "x", [["stop", result.pid]]) } : {}),
  };
}
