// This bridge's interactive processes: the live ones by pid (also in TerminalProcesses, so scope ends and
// shutdown reach them like any tree), the last ones that ended with how and their final screen, and the idle end.
import type { TreeOwner } from "../terminal-processes.js";
import { ENDED_PTYS_REMEMBERED, PTY_SCROLLBACK_LINES } from "./pty-limits.js";
import type { PtyEnd, PtyProcess, ScreenView } from "./pty-process.js";

export interface PtyRecord {
  pid: number;
  process: PtyProcess;
  owner: TreeOwner;
  command: string;
  cwd: string;
  startedAt: number;
}

export interface EndedPty {
  pid: number;
  owner: TreeOwner;
  command: string;
  cwd: string;
  startedAt: number;
  end: PtyEnd;
  /** Bytes it wrote in total. */
  endOffset: number;
  /** The screen as it was when the process ended (scrollback included). */
  finalScreen: ScreenView;
}

/** How long the idle end waits between looks, at most. */
const IDLE_SWEEP_MAX_MS = 60_000;

export class PtyRegistry {
  private readonly live = new Map<number, PtyRecord>();
  private readonly ended = new Map<number, EndedPty>();
  private sweeper: NodeJS.Timeout | undefined;
  /** When this bridge run began: a PTY from before it was ended by the restart. */
  readonly bridgeStartedAt = new Date().toISOString();

  constructor(
    readonly idleMs: number,
    private readonly graceMs: number,
  ) {}

  add(record: PtyRecord): void {
    this.live.set(record.pid, record);
    this.startSweeper();
    void record.process.ended.then((end) => {
      this.live.delete(record.pid);
      this.ended.delete(record.pid);
      this.ended.set(record.pid, {
        pid: record.pid,
        owner: record.owner,
        command: record.command,
        cwd: record.cwd,
        startedAt: record.startedAt,
        end,
        endOffset: record.process.replay.endOffset,
        finalScreen: record.process.screen(PTY_SCROLLBACK_LINES),
      });
      record.process.dispose();
      // The oldest ended ones go first (a Map keeps insertion order).
      while (this.ended.size > ENDED_PTYS_REMEMBERED) this.ended.delete(this.ended.keys().next().value!);
      if (this.live.size === 0) this.stopSweeper();
    });
  }

  /** A live PTY of this session. */
  liveOf(pid: number, sessionId: string): PtyRecord | undefined {
    const record = this.live.get(pid);
    return record?.owner.sessionId === sessionId ? record : undefined;
  }

  /** A PTY of this session that ended during this bridge run. */
  endedOf(pid: number, sessionId: string): EndedPty | undefined {
    const record = this.ended.get(pid);
    return record?.owner.sessionId === sessionId ? record : undefined;
  }

  list(sessionId: string): { live: PtyRecord[]; ended: EndedPty[] } {
    return {
      live: [...this.live.values()].filter((r) => r.owner.sessionId === sessionId),
      ended: [...this.ended.values()].filter((r) => r.owner.sessionId === sessionId),
    };
  }

  /** Every live PTY (the operator's read-only view). */
  all(): PtyRecord[] {
    return [...this.live.values()];
  }

  /** Every live PTY as the operator's read-only panel shows it: its owner, command (first 200 characters), screen. */
  screens() {
    return this.all().map((record) => {
      const view = record.process.screen(0);
      return {
        pid: record.pid,
        sessionId: record.owner.sessionId,
        projectId: record.owner.projectId,
        command: record.command.slice(0, 200),
        startedAt: new Date(record.startedAt).toISOString(),
        rows: view.rows,
        cols: view.cols,
        cursor: view.cursor,
        screen: view.screen,
      };
    });
  }

  private startSweeper(): void {
    if (this.sweeper) return;
    this.sweeper = setInterval(() => this.endIdle(), Math.min(IDLE_SWEEP_MAX_MS, Math.max(50, this.idleMs / 4)));
    this.sweeper.unref();
  }

  private stopSweeper(): void {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  private endIdle(): void {
    const now = Date.now();
    for (const record of this.live.values()) {
      if (record.process.running && now - record.process.lastUsed >= this.idleMs)
        void record.process.stop("idle", this.graceMs);
    }
  }
}
