// /x?pty=1: what the terminal tool does for an interactive start. The command starts on a PTY, the call waits
// for its first output to settle (bounded) and answers the screen with the URLs that type into it and read it.
import { z } from "zod";
import { ErrorCode, ToolError } from "../../../errors.js";
import type { ToolContext } from "../../../kernel/tool/definition.js";
import type { LaunchPlan } from "../../../sandbox/launcher.js";
import { runtimeOf } from "../../journal/context.js";
import { launcherRefused } from "../terminal-background.js";
import { DEFAULT_PTY_COLS, DEFAULT_PTY_ROWS, DEFAULT_QUIET_MS } from "./pty-limits.js";
import { ptyStateFields, ptyUrlFields, screenFields, screenOf, stateOf, urlsOf } from "./pty-answer.js";
import { startPty } from "./pty-start.js";

/** How long a start waits for the program's first screen (a prompt) to settle before answering. */
const START_SETTLE_MS = 3000;
/** The launcher's own refusals begin with this, on the PTY like any output, and it exits 125. */
const LAUNCHER_PREFIX = "urlbridge-sandbox: ";
const LAUNCHER_ERROR_EXIT = 125;

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
  env: Record<string, string>;
  plan: LaunchPlan | undefined;
  rows: number | undefined;
  cols: number | undefined;
}

export async function launchPty(request: PtyLaunchRequest, ctx: ToolContext): Promise<PtyStartOutput> {
  const { terminal } = runtimeOf(ctx);
  const record = await startPty({
    command: request.command,
    cwd: request.cwd.absolute,
    cwdDisplay: request.cwd.display,
    env: request.env,
    plan: request.plan,
    rows: request.rows ?? DEFAULT_PTY_ROWS,
    cols: request.cols ?? DEFAULT_PTY_COLS,
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
