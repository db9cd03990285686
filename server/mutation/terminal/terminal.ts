// terminal (/x): one shell command in the project, as a journaled intent. Foreground runs hold one of the
// machine-wide gate's slots until they finish or time out; bg=1 launches a long-running process and reports
// its start-up. Protocol: docs/PROTOCOL.md §6.
import { stat } from "node:fs/promises";
import { z } from "zod";
import { ErrorCode, ToolError } from "../../errors.js";
import { defineTool, type InterruptedIntent, type ToolContext } from "../../kernel/tool/definition.js";
import { cwdDepthOf, guardCommand } from "../../sandbox/command-guard.js";
import { buildChildEnv } from "../../sandbox/env-scrub.js";
import { resolveInsideRoot } from "../../sandbox/paths.js";
import { growthExceeded } from "../growth-budget.js";
import { runtimeOf } from "../journal/context.js";
import { journalControls } from "../journal/controls.js";
import { interruptedFailure } from "../journal/recovery.js";
import { BLOB_ID_PATTERN, MAX_CHUNKS_PER_BLOB } from "../staging/staging.js";
import { checkPtyParameters, launchPty, ptyFields } from "./pty/pty-launch.js";
import { killTree, processStartTicks } from "./process-tree.js";
import { STARTUP_WINDOW_MS } from "./startup-transcript.js";
import { terminalOutput, type StopOutput, type TerminalOutput } from "./terminal-answers.js";
import { limitsAfter, reportBackground, reportForeground } from "./terminal-report.js";
import { checkpointed } from "./terminal-checkpoint.js";
import { commandRunner } from "./terminal-runner.js";
import { DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS, MIN_TIMEOUT_MS } from "./terminal-run.js";

// The answers' shapes live in terminal-answers.ts; these names stay importable from here.
export {
  backgroundOutput,
  foregroundOutput,
  stopOutput,
  terminalOutput,
  type BackgroundOutput,
  type ForegroundOutput,
  type StopOutput,
  type TerminalOutput,
} from "./terminal-answers.js";

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
  ...ptyFields,
  ...journalControls,
});

type TerminalArgs = z.infer<typeof schema>;

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
  checkPtyParameters(args, ctx);
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
  runtimeOf(ctx).terminal.growth.beginCommand(owner.sessionId, owner.root);
  const runner = commandRunner({ command, cwd, env, owner, checkpoint: (pid) => checkpointProcess(ctx, pid) }, ctx);
  if (args.pty)
    return launchPty({ command, cwd, rows: args.rows, cols: args.cols, open: (size) => runner.openPty(size) }, ctx);
  if (args.bg) return reportBackground(await runner.background(), ctx, cwd.display);
  const timeoutMs = args.timeout ?? DEFAULT_TIMEOUT_MS;
  ctx.intent?.progress({ phase: "running", since: new Date().toISOString() });
  // Checkpoints around it record what it changed in the session's change set (terminal-checkpoint.ts).
  const result = await checkpointed(ctx, () => runner.foreground(timeoutMs));
  return reportForeground(result, timeoutMs, cwd.display, limitsAfter(ctx, result));
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
