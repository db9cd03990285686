// One interactive process: the channel it runs on (a PTY on this host or a TTY exec in the project's container,
// pty-channel.ts), a terminal emulator rendering its screen (@xterm/headless), the raw bytes by offset
// (ReplayBuffer), and the waits an input call can make for its output. A flood pauses the channel until the
// emulator has caught up, so memory stays bounded by the limits in pty-limits.ts.
import type { Terminal } from "@xterm/headless";
import type { PtyChannel } from "./pty-channel.js";
import { PTY_PARSE_BACKLOG_BYTES } from "./pty-limits.js";
import { ReplayBuffer, type ReplayPage } from "./replay-buffer.js";

/** Why a pty=1 process ended; memory and growth: the session passed an agent limit (server/sandbox/agent-limits.ts). */
export const PTY_END_REASONS = ["exited", "stopped", "idle", "scope_ended", "shutdown", "memory", "growth"] as const;
export type PtyEndReason = (typeof PTY_END_REASONS)[number];

export interface PtyEnd {
  exitCode: number | null;
  signal: string | null;
  reason: PtyEndReason;
  endedAt: number;
}

export interface ScreenView {
  rows: number;
  cols: number;
  /** 1-based, like a terminal's own cursor addressing: row 1 is the top visible row. */
  cursor: { row: number; col: number };
  /** The alternate screen is on (a full-screen program such as less, vim or top draws there). */
  altScreen: boolean;
  /** The visible rows, trailing blanks trimmed, trailing empty rows dropped. */
  screen: string;
  /** The last lines that scrolled off the top (oldest first), at most as many as asked. */
  scrollback: string[];
  /** Lines held above the screen in total. */
  scrollbackTotal: number;
}

export type WaitUntil = { quietMs: number } | { text: string } | { pattern: OutputMatcher };

/**
 * Tests a pattern against the output's window off the main thread (terminal-input.ts hands the bridge's regex
 * worker): true or false, or "timeout" / "aborted" when the deadline or the wait ended the test first.
 */
export type OutputMatcher = (
  text: string,
  deadline: number,
  signal: AbortSignal,
) => Promise<boolean | "timeout" | "aborted">;

export interface WaitResult {
  until: "quiet" | "text" | "pattern" | "exited" | "timeout";
  waitedMs: number;
}

/** Text an expect-style wait searches: the output since the input, escape sequences removed, its end only. */
const EXPECT_WINDOW_CHARS = 8 * 1024;
// CSI, OSC (BEL or ST terminated), two-byte escapes, then the C0 controls other than newline and tab.
// eslint-disable-next-line no-control-regex
const ESCAPES = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-_]|[\x00-\x08\x0b-\x1f\x7f]/g;

export function stripEscapes(text: string): string {
  return text.replace(ESCAPES, "");
}

export interface PtyProcessOptions {
  channel: PtyChannel;
  terminal: Terminal;
  replayBytes: number;
}

export class PtyProcess {
  readonly pid: number;
  readonly replay: ReplayBuffer;
  /** Last time an agent typed into or looked at it (the idle end counts from here). */
  lastUsed = Date.now();
  end: PtyEnd | undefined;
  /** Resolves when the channel's process has exited and its output is parsed. */
  readonly ended: Promise<PtyEnd>;
  private readonly channel: PtyChannel;
  private readonly terminal: Terminal;
  private backlog = 0;
  private lastOutput = Date.now();
  private endReason: PtyEndReason | undefined;
  private readonly watchers = new Set<() => void>();

  constructor(options: PtyProcessOptions) {
    this.channel = options.channel;
    this.terminal = options.terminal;
    this.pid = options.channel.pid;
    this.replay = new ReplayBuffer(options.replayBytes);
    this.channel.onData((chunk) => this.onOutput(chunk));
    this.ended = new Promise((resolve) => {
      this.channel.onExit(({ exitCode, signal }) => {
        // The channel reports the exit after its last output: what is left is the emulator's queue, parsed before
        // the end is reported.
        this.terminal.write("", () => {
          this.end = { exitCode, signal, reason: this.endReason ?? "exited", endedAt: Date.now() };
          this.notify();
          resolve(this.end);
        });
      });
    });
  }

  get running(): boolean {
    return this.end === undefined;
  }

  get size(): { rows: number; cols: number } {
    return { rows: this.terminal.rows, cols: this.terminal.cols };
  }

  private onOutput(chunk: Buffer): void {
    this.lastOutput = Date.now();
    this.replay.push(chunk);
    this.backlog += chunk.length;
    if (this.backlog > PTY_PARSE_BACKLOG_BYTES) this.channel.pause();
    this.terminal.write(chunk, () => {
      this.backlog -= chunk.length;
      if (this.backlog < PTY_PARSE_BACKLOG_BYTES / 4) this.channel.resume();
      this.notify();
    });
  }

  private notify(): void {
    for (const watcher of this.watchers) watcher();
  }

  write(data: string): void {
    this.lastUsed = Date.now();
    this.channel.write(data);
  }

  resize(rows: number, cols: number): void {
    this.lastUsed = Date.now();
    this.channel.resize(rows, cols);
    this.terminal.resize(cols, rows);
  }

  /** Sends a signal to the terminal's foreground process group (what a shell runs now), else to the command. */
  signal(name: NodeJS.Signals): Promise<number | undefined> {
    this.lastUsed = Date.now();
    return this.channel.signal(name);
  }

  /** Resolves once everything the PTY has delivered so far is on the screen. */
  flush(): Promise<void> {
    return new Promise((resolve) => this.terminal.write("", resolve));
  }

  screen(scrollbackLines: number): ScreenView {
    const buffer = this.terminal.buffer.active;
    const { rows, cols } = this.terminal;
    const line = (y: number) => (buffer.getLine(y)?.translateToString(true) ?? "").trimEnd();
    const visible = Array.from({ length: rows }, (_, i) => line(buffer.baseY + i));
    while (visible.length > 0 && visible[visible.length - 1] === "") visible.pop();
    const from = Math.max(0, buffer.baseY - scrollbackLines);
    return {
      rows,
      cols,
      cursor: { row: buffer.cursorY + 1, col: buffer.cursorX + 1 },
      altScreen: buffer.type === "alternate",
      screen: visible.join("\n"),
      scrollback: Array.from({ length: buffer.baseY - from }, (_, i) => line(from + i)),
      scrollbackTotal: buffer.baseY,
    };
  }

  read(offset: number, limit: number): ReplayPage {
    return this.replay.read(offset, limit);
  }

  /**
   * Waits, at most timeoutMs, for the output after `sinceOffset` to contain a text or match a pattern, or for
   * the output to pause for quietMs; ends early when the process ends. A pattern is tested by the matcher, one test
   * at a time: output that arrives during a test is tested next, so the last output is always tested.
   */
  async waitFor(until: WaitUntil, sinceOffset: number, timeoutMs: number, signal: AbortSignal): Promise<WaitResult> {
    const started = performance.now();
    const deadlineAt = Date.now() + timeoutMs;
    const result = (kind: WaitResult["until"]): WaitResult => ({
      until: kind,
      waitedMs: Math.round(performance.now() - started),
    });
    await this.flush();
    return new Promise<WaitResult>((resolve) => {
      let quietTimer: NodeJS.Timeout | undefined;
      let done = false;
      // Ends a test still running when the wait ends (its worker is replaced: the regex had overrun anyway).
      const testing = new AbortController();
      let testRunning = false;
      let testAgain = false;
      const finish = (kind: WaitResult["until"]) => {
        if (done) return;
        done = true;
        clearTimeout(deadline);
        clearTimeout(quietTimer);
        this.watchers.delete(check);
        signal.removeEventListener("abort", onAbort);
        testing.abort();
        resolve(result(kind));
      };
      const windowText = () =>
        stripEscapes(this.replay.read(sinceOffset, Number.MAX_SAFE_INTEGER).text).slice(-EXPECT_WINDOW_CHARS);
      const testPattern = (matcher: OutputMatcher) => {
        if (testRunning) return void (testAgain = true);
        testRunning = true;
        const ended = this.end !== undefined;
        void matcher(windowText(), deadlineAt, testing.signal).then((found) => {
          testRunning = false;
          if (done) return;
          if (found === true) return finish("pattern");
          if (found !== false) return finish("timeout");
          if (testAgain) {
            testAgain = false;
            return testPattern(matcher);
          }
          if (ended) finish("exited");
        });
      };
      const check = () => {
        if (done) return;
        if ("pattern" in until) return testPattern(until.pattern);
        if ("quietMs" in until) {
          clearTimeout(quietTimer);
          const quietFor = Date.now() - this.lastOutput;
          if (this.backlog === 0 && quietFor >= until.quietMs) return finish("quiet");
          quietTimer = setTimeout(check, Math.max(10, until.quietMs - quietFor));
        } else if (windowText().includes(until.text)) return finish("text");
        if (this.end) finish("exited");
      };
      const deadline = setTimeout(() => finish("timeout"), timeoutMs);
      const onAbort = () => finish("timeout");
      signal.addEventListener("abort", onAbort, { once: true });
      this.watchers.add(check);
      check();
    });
  }

  /** Ends the process tree: the channel asks it to end, and makes sure after `graceMs`. */
  async stop(reason: PtyEndReason, graceMs: number): Promise<PtyEnd> {
    if (this.end) return this.end;
    this.endReason ??= reason;
    this.channel.end(false);
    const timer = setTimeout(() => this.channel.end(true), graceMs);
    const end = await this.ended;
    clearTimeout(timer);
    return end;
  }

  dispose(): void {
    this.watchers.clear();
    this.terminal.dispose();
  }
}
