// Every bound on interactive (pty=1) processes, in one place: /api/health reports them as they are.

/** Rows x columns when the start gives none: the classic terminal. */
export const DEFAULT_PTY_ROWS = 24;
export const DEFAULT_PTY_COLS = 80;
export const MAX_PTY_ROWS = 200;
export const MAX_PTY_COLS = 500;
/** PTY processes alive at once for one session, and for the whole bridge. */
export const MAX_PTYS_PER_SESSION = 4;
export const MAX_PTYS_PER_BRIDGE = 16;
/** Raw output kept per process for replay by offset; older bytes are dropped and reported as lost. */
export const PTY_REPLAY_BYTES = 1024 * 1024;
/** Lines the screen keeps above the visible rows. */
export const PTY_SCROLLBACK_LINES = 1000;
/** What one session's PTYs can hold at most: the per-process bounds times the per-session cap. */
export const PTY_REPLAY_BYTES_PER_SESSION = PTY_REPLAY_BYTES * MAX_PTYS_PER_SESSION;
export const PTY_SCROLLBACK_LINES_PER_SESSION = PTY_SCROLLBACK_LINES * MAX_PTYS_PER_SESSION;
/** Output the emulator has not parsed yet beyond which the PTY is paused, so a flood waits instead of piling up. */
export const PTY_PARSE_BACKLOG_BYTES = 512 * 1024;
/** A PTY nobody typed into or looked at for this long is ended (URLBRIDGE_PTY_IDLE_MS overrides). */
export const DEFAULT_PTY_IDLE_MS = 30 * 60 * 1000;
/** An input call's wait for output: default quiet period, and the longest any wait may take. */
export const DEFAULT_QUIET_MS = 300;
export const MAX_INPUT_WAIT_MS = 20_000;
/** Bytes one raw page answers at most, and by default. */
export const MAX_RAW_PAGE_BYTES = 64 * 1024;
export const DEFAULT_RAW_PAGE_BYTES = 16 * 1024;
/** Scrollback lines a screen view adds above the visible rows at most. */
export const MAX_VIEW_SCROLLBACK = 500;
/** Ended PTYs remembered per bridge so a later call can say how one ended (their final screens included). */
export const ENDED_PTYS_REMEMBERED = 32;

/** The bounds as /api/health shows them. */
export function ptyLimits(idleMs: number) {
  return {
    perSession: MAX_PTYS_PER_SESSION,
    perBridge: MAX_PTYS_PER_BRIDGE,
    replayBytesPerProcess: PTY_REPLAY_BYTES,
    replayBytesPerSession: PTY_REPLAY_BYTES_PER_SESSION,
    scrollbackLinesPerProcess: PTY_SCROLLBACK_LINES,
    scrollbackLinesPerSession: PTY_SCROLLBACK_LINES_PER_SESSION,
    idleEndMs: idleMs,
    maxInputWaitMs: MAX_INPUT_WAIT_MS,
  };
}
