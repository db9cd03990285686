// /x?pty=1: what the terminal tool does for an interactive start: its parameters and their conflicts, then the
// command starts on a PTY (this host) or a TTY exec (the project's container), the call waits for its first output
// to settle (bounded) and answers the screen with the URLs that type into it and read it.
import { z } from "zod";
import { ErrorCode, ToolError } from "../../../errors.js";
import type { ToolContext } from "../../../kernel/tool/definition.js";
import { runtimeOf } from "../../journal/context.js";
import { launcherRefused } from "../terminal-background.js";
import type { PtyChannel } from "./pty-channel.js";
import { DEFAULT_PTY_COLS, DEFAULT_PTY_ROWS, DEFAULT_QUIET_MS, MAX_PTY_COLS, MAX_PTY_ROWS } from "./pty-limits.js";
import { ptyStateFields, ptyUrlFields, screenFields, screenOf, stateOf, urlsOf } from "./pty-answer.js";
import { startPty } from "./pty-start.js";

/** How long a start waits for the program's first screen (a prompt) to settle before answering. */
const START_SETTLE_MS = 3000;
/** The launcher's own refusals begin with this, on the PTY like any output, and it exits 125. */
const LAUNCHER_PREFIX = "urlbridge-sandbox: ";
const LAUNCHER_ERROR_EXIT = 125;

/** The terminal tool's pty=1 parameters, spread into its schema. */
export const ptyFields = {
  /** pty=1: an interactive process on a pseudo-terminal (rows x cols), typed into with /i and read with /m. */
  pty: z
    .boolean()
    .optional()
    .transform((v) => (v ? true : undefined)),
  rows: z.number().int().min(2).max(MAX_PTY_ROWS).optional(),
  cols: z.number().int().min(10).max(MAX_PTY_COLS).optional(),
};

interface PtyParameters {
  pty?: true;
  rows?: number;
  cols?: number;
  bg?: true;
  timeout?: number;
}

/** Refuses what cannot go with pty=1 (bg=, timeout=), and a size given without it. */
export function checkPtyParameters(args: PtyParameters, ctx: ToolContext): void {
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
}

export const ptyStartOutput = z.strictObject({
  ok: z.literal(true),
  mode: z.literal("pty"),
  ...ptyStateFields,
  cwd: z.string().describe("Where the command runs: /project or a folder below it."),
  ...screenFields,
  ...ptyUrlFields,
});
export type PtyStartOutput = z.infer<typeof ptyStartOutput>;

export interface PtyLaunchRequest {
  command: string;
  cwd: { absolute: string; display: string };
  rows: number | undefined;
  cols: number | undefined;
  /** Opens the channel where the command runs (terminal-runner.ts: this host or the project's container). */
  open(size: { rows: number; cols: number }): Promise<PtyChannel>;
}

export async function launchPty(request: PtyLaunchRequest, ctx: ToolContext): Promise<PtyStartOutput> {
  const { terminal } = runtimeOf(ctx);
  const size = { rows: request.rows ?? DEFAULT_PTY_ROWS, cols: request.cols ?? DEFAULT_PTY_COLS };
  const record = await startPty({
    command: request.command,
    cwdDisplay: request.cwd.display,
    ...size,
    open: () => request.open(size),
    owner: { sessionId: ctx.session.id, projectId: ctx.project.id },
    processes: terminal.processes,
    ptys: terminal.ptys,
    signal: ctx.signal,
  });
  await record.process.waitFor({ quietMs: DEFAULT_QUIET_MS }, 0, START_SETTLE_MS, ctx.signal);
  const end = record.process.end;
  if (end?.exitCode === LAUNCHER_ERROR_EXIT) {
    const first = record.process.read(0, 1024).text;
    if (first.startsWith(LAUNCHER_PREFIX))
      throw launcherRefused(first.slice(LAUNCHER_PREFIX.length).split(/\r?\n/)[0]!);
  }
  if (end && end.reason !== "exited") {
    throw new ToolError(ErrorCode.interrupted, `The PTY process was ended while it started (${end.reason}).`, {
      detail: { started: true, reason: end.reason },
      retryable: false,
    });
  }
  return {
    ok: true as const,
    mode: "pty" as const,
    ...stateOf(record),
    cwd: record.cwd,
    ...screenOf(record.process.screen(0), false),
    ...urlsOf(ctx.urls, record.pid, record.process.running),
  };
}
