// Where one /x command runs: the project's warm container (URLBRIDGE_SANDBOX=container) or this host under the
// sandbox launcher. Both answer the same results, so the terminal tool reports a run one way whichever ran it.
import fs from "node:fs";
import { linkedWorktreeCommonDir } from "../../sandbox/git-worktree-link.js";
import path from "node:path";
import type { ToolContext } from "../../kernel/tool/definition.js";
import type { LaunchPlan } from "../../sandbox/launcher.js";
import { runtimeOf } from "../journal/context.js";
import { backgroundLogDir, launchBackground, type LaunchResult, type LogReader } from "./terminal-background.js";
import type { TreeOwner } from "./terminal-processes.js";
import { runForeground, type ForegroundResult } from "./terminal-run.js";
import { treeEndsWithBridge } from "./terminal-spawn.js";

export interface CommandRunner {
  /** bg=1: starts the command and reports its start-up window. */
  background(): Promise<LaunchResult>;
  /** Runs the command to its end, or ends its tree after timeoutMs. */
  foreground(timeoutMs: number): Promise<ForegroundResult>;
}

export interface RunRequest {
  command: string;
  cwd: { absolute: string; display: string };
  env: Record<string, string>;
  owner: TreeOwner;
  /** Records a host foreground tree's pid durably, for recovery after a crash (terminal.ts). */
  checkpoint(pid: number): void;
}

export function commandRunner(request: RunRequest, ctx: ToolContext): CommandRunner {
  const { terminal } = runtimeOf(ctx);
  const relative = path.relative(ctx.project.root, request.cwd.absolute);
  const { container } = terminal;
  if (container) {
    const base = { command: request.command, root: ctx.project.root, cwd: relative, owner: request.owner };
    return {
      background: () => container.launchBackground({ ...base, signal: ctx.signal }),
      foreground: (timeoutMs) => container.runForeground({ ...base, timeoutMs, signal: ctx.signal }),
    };
  }
  const common = { command: request.command, cwd: request.cwd.absolute, env: request.env, owner: request.owner };
  return {
    background: () => {
      const { plan, logDir, logReader } = hostPlan(ctx, relative, false);
      return launchBackground({
        ...common,
        plan,
        processes: terminal.processes,
        logDir,
        logReader,
        signal: ctx.signal,
      });
    },
    foreground: (timeoutMs) => {
      const { plan } = hostPlan(ctx, relative, true);
      return runForeground({
        ...common,
        plan,
        processes: terminal.processes,
        timeoutMs,
        signal: ctx.signal,
        // A durable commit per command, worth it only when a crash would leave the tree running (a bare spawn).
        ...(treeEndsWithBridge(plan) ? {} : { onSpawn: (pid: number) => request.checkpoint(pid) }),
      });
    },
  };
}

export interface HostPlan {
  plan: LaunchPlan | undefined;
  logDir: string | undefined;
  logReader: LogReader | undefined;
}

/**
 * The launcher's plan for a command on this host, in `relative` below the project root. endsWithCommand: the tree
 * ends when the command does (foreground and pty=1), so nothing it left behind outlives it.
 */
export function hostPlan(ctx: ToolContext, relative: string, endsWithCommand: boolean): HostPlan {
  const { sandbox } = runtimeOf(ctx);
  // The project's bg=1 logs: readable by its own commands (tail), by no other project's.
  const logDir = sandbox ? backgroundLogDir(ctx.project.id) : undefined;
  const identity = sandbox?.identityFor(ctx.project.root);
  const logReader = identity ? { gid: identity.gid } : undefined;
  // A linked worktree's git reads the main repository's metadata (objects, refs, its own admin folder) outside
  // the root: read-only, so commands can run git status/diff/log but never move a branch or rewrite history
  // (docs/SECURITY.md "Worktree sessions"; git-worktree-link.ts admits only a link git itself registered).
  const common = linkedWorktreeCommonDir(ctx.project.root);
  const plan = sandbox?.plan({ id: ctx.project.id, root: ctx.project.root }, relative, endsWithCommand, [
    ...(logDir && fs.existsSync(logDir) ? [logDir] : []),
    ...(common ? [common] : []),
  ]);
  return { plan, logDir, logReader };
}
