// pty=1 launches: the command runs on a pseudo-terminal under the same sandbox launcher as every terminal
// command (same Landlock rules, identity, scrubbed environment and tree ownership), with --tty so the launcher
// hands the terminal to the command's own session. node-pty opens the PTY and forks the launcher onto it.
import { ErrorCode, ToolError } from "../../../errors.js";
import { launcherBinary, type LaunchPlan } from "../../../sandbox/launcher.js";
import { KILL_GRACE_MS } from "../process-tree.js";
import type { TerminalProcesses, TreeOwner } from "../terminal-processes.js";
import { resolveShell } from "../terminal-spawn.js";
import { MAX_PTYS_PER_BRIDGE, MAX_PTYS_PER_SESSION, PTY_REPLAY_BYTES, PTY_SCROLLBACK_LINES } from "./pty-limits.js";
import { PtyProcess } from "./pty-process.js";
import type { PtyRecord, PtyRegistry } from "./pty-registry.js";

/** Past the launcher's own grace, how long ending a PTY's tree may take before the launcher is killed. */
const STOP_SLACK_MS = 3000;
/** The terminal type the command sees: what the emulator understands. */
const TERM = "xterm-256color";

export interface PtyStartOptions {
  command: string;
  /** Where the command runs (absolute); the plan's launcher walks to it itself. */
  cwd: string;
  /** The display form (/project/...). */
  cwdDisplay: string;
  env: Record<string, string>;
  plan?: LaunchPlan;
  rows: number;
  cols: number;
  owner: TreeOwner;
  processes: TerminalProcesses;
  ptys: PtyRegistry;
  /** The bridge's shutdown signal: PTYs end with the bridge. */
  signal: AbortSignal;
}

export async function startPty(options: PtyStartOptions): Promise<PtyRecord> {
  options.signal.throwIfAborted();
  checkLimits(options);
  const [{ spawn }, xterm] = await Promise.all([import("@lydell/node-pty"), import("@xterm/headless")]);
  checkLimits(options);
  const shell = resolveShell();
  const shellArgv = [shell.file, ...shell.args, options.command];
  const binary = options.plan?.file ?? launcherBinary();
  const [file, args] = binary
    ? [binary, [...(options.plan?.args ?? ["--foreground"]), "--tty", "--", ...shellArgv]]
    : [shellArgv[0]!, shellArgv.slice(1)];
  const pty = spawn(file, args, {
    name: TERM,
    rows: options.rows,
    cols: options.cols,
    cwd: binary ? (options.plan?.spawnCwd ?? options.cwd) : options.cwd,
    env: { ...options.env, ...(options.plan?.env ?? {}), TERM },
    encoding: null,
  });
  // The package is CommonJS with an ES module beside it: which one loads depends on the loader (vitest, tsx, the build).
  const { Terminal } = (xterm as { Terminal?: typeof xterm.Terminal }).Terminal ? xterm : xterm.default;
  const terminal = new Terminal({
    rows: options.rows,
    cols: options.cols,
    scrollback: PTY_SCROLLBACK_LINES,
    allowProposedApi: true,
  });
  const process = new PtyProcess({ pty, terminal, replayBytes: PTY_REPLAY_BYTES });
  const record: PtyRecord = {
    pid: process.pid,
    process,
    owner: options.owner,
    command: options.command,
    cwd: options.cwdDisplay,
    startedAt: Date.now(),
  };
  const graceMs = KILL_GRACE_MS + STOP_SLACK_MS;
  const forget = options.processes.add({
    pid: process.pid,
    kind: "pty",
    owner: options.owner,
    command: options.command,
    cwd: options.cwdDisplay,
    startedAt: record.startedAt,
    stop: async (reason) => void (await process.stop(reason, graceMs)),
  });
  const onShutdown = () => void process.stop("shutdown", graceMs);
  options.signal.addEventListener("abort", onShutdown, { once: true });
  options.ptys.add(record);
  void process.ended.then(() => {
    forget();
    options.signal.removeEventListener("abort", onShutdown);
  });
  return record;
}

function checkLimits(options: PtyStartOptions): void {
  const mine = options.processes.count({ kind: "pty", sessionId: options.owner.sessionId });
  const all = options.processes.count({ kind: "pty" });
  if (mine < MAX_PTYS_PER_SESSION && all < MAX_PTYS_PER_BRIDGE) return;
  const running = options.processes
    .list({ kind: "pty", sessionId: options.owner.sessionId })
    .map(({ pid, command }) => ({ pid, command: command.slice(0, 120) }));
  const which =
    mine >= MAX_PTYS_PER_SESSION
      ? `this session's limit of ${MAX_PTYS_PER_SESSION}`
      : `the bridge's limit of ${MAX_PTYS_PER_BRIDGE}`;
  throw new ToolError(
    ErrorCode.ptyLimitReached,
    `${which.startsWith("this") ? mine : all} pty=1 processes are running (${which}). Stop one of yours with /x?stop=<pid>, or wait for one to end, then start again.`,
    {
      detail: { running, perSession: MAX_PTYS_PER_SESSION, perBridge: MAX_PTYS_PER_BRIDGE },
      agentAction: "wait_and_retry",
    },
  );
}
