// pty=1 starts: the PTY limits checked and the start held in the process registry while the channel opens (on
// this host or in the project's container: the caller's open()), then the emulator and the PtyProcess over it,
// registered so stop=, scope ends, the idle end and shutdown reach it like any tree.
import { ErrorCode, ToolError } from "../../../errors.js";
import { KILL_GRACE_MS } from "../process-tree.js";
import type { TerminalProcesses, TreeOwner } from "../terminal-processes.js";
import type { PtyChannel } from "./pty-channel.js";
import { MAX_PTYS_PER_BRIDGE, MAX_PTYS_PER_SESSION, PTY_REPLAY_BYTES, PTY_SCROLLBACK_LINES } from "./pty-limits.js";
import { PtyProcess } from "./pty-process.js";
import type { PtyRecord, PtyRegistry } from "./pty-registry.js";

/** Past the launcher's own grace, how long ending a PTY's tree may take before it is made sure of. */
const STOP_SLACK_MS = 3000;

export interface PtyStartOptions {
  command: string;
  /** The display form (/project/...). */
  cwdDisplay: string;
  rows: number;
  cols: number;
  /** Opens the channel with the command on it, rows x cols (host-pty-channel.ts, container-pty-channel.ts). */
  open(): Promise<PtyChannel>;
  owner: TreeOwner;
  processes: TerminalProcesses;
  ptys: PtyRegistry;
  /** The bridge's shutdown signal: PTYs end with the bridge. */
  signal: AbortSignal;
}

export async function startPty(options: PtyStartOptions): Promise<PtyRecord> {
  options.signal.throwIfAborted();
  checkLimits(options);
  // Counted from here, so two starts at once cannot pass the caps; a scope end meanwhile ends it once it runs.
  const pending = options.processes.begin("pty", options.owner);
  const [channel, xterm] = await Promise.all([options.open(), import("@xterm/headless")]).catch((error: unknown) => {
    pending.abandoned();
    throw error;
  });
  // The package is CommonJS with an ES module beside it: which one loads depends on the loader (vitest, tsx, the build).
  const { Terminal } = (xterm as { Terminal?: typeof xterm.Terminal }).Terminal ? xterm : xterm.default;
  const terminal = new Terminal({
    rows: options.rows,
    cols: options.cols,
    scrollback: PTY_SCROLLBACK_LINES,
    allowProposedApi: true,
  });
  const process = new PtyProcess({ channel, terminal, replayBytes: PTY_REPLAY_BYTES });
  const record: PtyRecord = {
    pid: process.pid,
    process,
    owner: options.owner,
    command: options.command,
    cwd: options.cwdDisplay,
    startedAt: Date.now(),
  };
  const graceMs = KILL_GRACE_MS + STOP_SLACK_MS;
  options.ptys.add(record);
  const forget = pending.started({
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
  if (options.signal.aborted) onShutdown();
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
