// How /x words what a command did: a finished foreground run, a background launch, or the limit that ended it,
// as the answer both transports render, or as the typed error that carries the same fields.
import { ErrorCode, ToolError } from "../../errors.js";
import type { ToolContext } from "../../kernel/tool/definition.js";
import { growthExceeded, type GrowthOverrun } from "../growth-budget.js";
import { runtimeOf } from "../journal/context.js";
import type { MemoryOverrun } from "./memory-watchdog.js";
import type { BackgroundOutput, ForegroundOutput } from "./terminal-answers.js";
import { launcherRefused, spawnerLost, type LaunchResult } from "./terminal-background.js";
import type { CheckpointNote } from "./terminal-checkpoint.js";
import type { BoundedText } from "./terminal-output.js";
import { MAX_TIMEOUT_MS, type ForegroundResult } from "./terminal-run.js";

/** What the agent limits say about a finished foreground command: the overrun that ended it, or the growth it added. */
export function limitsAfter(ctx: ToolContext, result: ForegroundResult): LimitOutcome {
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

export interface LimitOutcome {
  memory?: MemoryOverrun;
  growth?: GrowthOverrun;
}

export function reportForeground(
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

export function reportBackground(result: LaunchResult, ctx: ToolContext, cwd: string): BackgroundOutput {
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
