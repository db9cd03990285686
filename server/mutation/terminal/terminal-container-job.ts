// One terminal command in a project's sandbox container as a job (terminal-container.ts runs them): its options,
// the random marker every process it starts inherits in its environment, and the sweep of the container's /proc
// that finds or ends what still carries that marker (setsid, double forks, daemons) after the command's end.
import type { ProjectContainers } from "../../sandbox/container/manager.js";
import { CHILD_ENV_DEFAULTS } from "../../sandbox/env-scrub.js";
import { CONTAINER_PROJECT_PATH } from "../../sandbox/container/spec.js";
import type { TerminalProcesses, TreeOwner } from "./terminal-processes.js";

/** The variable every process of one command inherits (a random hex id per command). */
export const JOB_VARIABLE = "URLBRIDGE_JOB";

/** The sweep that finds or ends a command's leftovers is a short command itself. */
const SWEEP_TIMEOUT_MS = 15_000;

export interface ContainerCommandOptions {
  command: string;
  /** The project root as the bridge sees it. */
  root: string;
  /** The working directory relative to the root ("" or "." for the root). */
  cwd: string;
  owner: TreeOwner;
  /** The bridge's shutdown signal. */
  signal?: AbortSignal;
  /** Added to CHILD_ENV_DEFAULTS; the bridge's own environment never enters a sandbox. */
  env?: Record<string, string>;
}

export interface ContainerForegroundOptions extends ContainerCommandOptions {
  timeoutMs: number;
}

export interface ContainerLaunchOptions extends ContainerCommandOptions {
  signal: AbortSignal;
  windowMs?: number;
  quietMs?: number;
}

/** What one command needs of its bridge (ContainerTerminal hands it out). */
export interface CommandContext {
  containers: ProjectContainers;
  processes: TerminalProcesses;
  /** The command's id in results and stop= (FIRST_HANDLE and up). */
  handle: number;
}

export const displayCwd = (cwd: string) =>
  cwd === "" || cwd === "." ? CONTAINER_PROJECT_PATH : `${CONTAINER_PROJECT_PATH}/${cwd}`;

export function commandEnv(options: ContainerCommandOptions, job: string): Record<string, string> {
  return { ...CHILD_ENV_DEFAULTS, ...options.env, [JOB_VARIABLE]: job };
}

/**
 * A shell loop over the container's /proc: every process (but the sweep itself, and the exec wrapper of
 * server/sandbox/container/exec.ts, which may still be exiting after it reported the command's end) whose
 * environment carries the job's marker; with `kill`, SIGKILLs them, in passes until none is found (a fork
 * between two passes is caught by the next), and prints how many. The job id is hex, safe inside the script.
 */
function sweepScript(job: string, kill: boolean): string {
  const marker = `${JOB_VARIABLE}=${job}`;
  const act = kill ? 'kill -KILL "$p" 2>/dev/null && f=$((f+1))' : "f=$((f+1))";
  return [
    "n=0",
    `for pass in 1 2 3 4 5; do f=0`,
    `  for d in /proc/[0-9]*; do p=\${d#/proc/}; [ "$p" = "$$" ] && continue`,
    `    case "$(tr '\\0' ' ' 2>/dev/null < "$d/cmdline")" in "sh -c "*" urlbridge-exec "*) continue;; esac`,
    `    case "$(tr '\\0' '\\n' 2>/dev/null < "$d/environ")" in *"${marker}"*) ${act};; esac`,
    "  done; n=$((n+f))",
    kill ? '  [ "$f" -eq 0 ] && break' : "  break",
    "done",
    'echo "$n"',
  ].join("\n");
}

/** Ends (or only counts) the processes still carrying the job's marker; answers how many. Never throws. */
export async function sweepJob(
  containers: ProjectContainers,
  projectId: string,
  root: string,
  job: string,
  kill: boolean,
): Promise<number> {
  let out = "";
  try {
    await containers.exec({
      projectId,
      root,
      command: sweepScript(job, kill),
      timeoutMs: SWEEP_TIMEOUT_MS,
      onStdout: (chunk) => (out += chunk.toString("latin1")),
    });
  } catch {
    // The container is gone or being restarted; whatever carried the marker ended with it.
    return 0;
  }
  const count = Number.parseInt(out.trim(), 10);
  return Number.isFinite(count) ? count : 0;
}

/** The signals an agent may send to a pty=1 process's foreground group (terminal-input.ts offers these). */
const GROUP_SIGNALS = new Set(["INT", "TERM", "HUP", "KILL", "QUIT", "TSTP", "CONT", "USR1", "USR2"]);

/**
 * A shell loop over the container's /proc for a pty=1 job: the first process carrying the job's marker that has a
 * controlling terminal names the terminal's foreground group (tpgid, the 8th field of /proc/<pid>/stat, read after
 * the command name's closing parenthesis); that group gets the signal and its id is printed. Nothing is printed
 * when no process of the job holds a terminal any more.
 */
function signalScript(job: string, signal: string): string {
  const marker = `${JOB_VARIABLE}=${job}`;
  return [
    `for d in /proc/[0-9]*; do p=\${d#/proc/}; [ "$p" = "$$" ] && continue`,
    `  case "$(tr '\\0' '\\n' 2>/dev/null < "$d/environ")" in *"${marker}"*) ;; *) continue;; esac`,
    `  s=$(cat "$d/stat" 2>/dev/null) || continue; set -- \${s##*) }`,
    `  [ "\${6:-0}" -gt 0 ] 2>/dev/null || continue`,
    `  kill -s ${signal} -- "-$6" 2>/dev/null && { echo "$6"; exit 0; }`,
    "done",
  ].join("\n");
}

/** Sends a signal (INT, TERM, ...) to the foreground group of a pty=1 job's terminal; answers the group. Never throws. */
export async function signalJobTerminal(
  containers: ProjectContainers,
  projectId: string,
  root: string,
  job: string,
  signal: string,
): Promise<number | undefined> {
  if (!GROUP_SIGNALS.has(signal)) return undefined;
  let out = "";
  try {
    await containers.exec({
      projectId,
      root,
      command: signalScript(job, signal),
      timeoutMs: SWEEP_TIMEOUT_MS,
      onStdout: (chunk) => (out += chunk.toString("latin1")),
    });
  } catch {
    return undefined;
  }
  const group = Number.parseInt(out.trim(), 10);
  return Number.isInteger(group) && group > 0 ? group : undefined;
}
