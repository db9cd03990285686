// The request and reply pipes between the bridge and one resident spawner (native/urlbridge-spawner.c): frames
// to it, and its one-line answer to each start request, which never holds the event loop longer than
// REPLY_BLOCKING_MS. The answers carry no id (the n-th line answers the n-th start), so starts are serialized:
// one is in flight, the others wait their turn in the bridge and never reach the pipe before it.
import fs from "node:fs";

/**
 * How long a start request may wait for the spawner's answer before the spawner is given up as hung (the caller
 * kills it, which ends the commands it runs, reported spawner_lost). The answer comes within a fork of 1.5 MiB;
 * the bound is generous so that a stalled machine does not cost running commands.
 */
export const REPLY_TIMEOUT_MS = 5000;
/**
 * The longest a start request blocks the event loop waiting for the answer, which normally comes within tens of
 * microseconds (a fork of the 1 MiB spawner): waiting for it synchronously is what makes /x a bare spawn's cost.
 * Past this (a stopped or starved spawner) the answer is waited for on a timer, and the bridge serves other
 * requests meanwhile. 20, not 2: on a loaded machine the answer often takes a few milliseconds, and each start
 * that misses the bound then waits for a timer turn of a busy event loop, while starts are serialized: at 2 ms
 * the 120 s soak (16 sessions, 200 in flight) ran 331 commands, 945 at 20 ms, 827 before the bound existed.
 */
export const REPLY_BLOCKING_MS = 20;
/** Within REPLY_BLOCKING_MS, how long the answer is polled without sleeping (an Atomics.wait costs ~0.1 ms of timer slack). */
const REPLY_SPIN_MS = 1;
const REPLY_SLEEP_MS = 0.05;
/** Past REPLY_BLOCKING_MS, how often a timer checks for the answer (and writes what the request pipe did not take). */
const REPLY_POLL_INTERVAL_MS = 1;

/** What became of one start request. */
export type StartAnswer =
  | { kind: "reply"; line: string }
  /** It never fully reached the spawner (lost before its turn or mid-write): nothing ran, a direct spawn is safe. */
  | { kind: "unsent" }
  /** It reached the spawner, which gave no answer within REPLY_TIMEOUT_MS or died: the launcher may have started. */
  | { kind: "lost" };

interface Request {
  frame: Buffer;
  resolve(answer: StartAnswer): void;
  /** The whole frame is in the pipe. */
  sent: boolean;
  deadline: number;
}

interface Outgoing {
  bytes: Buffer;
  at: number;
  onWritten?: () => void;
}

const waitCell = new Int32Array(new SharedArrayBuffer(4));

/** A frame: a 4-byte little-endian length, then NUL-terminated fields. */
function encodeFrame(fields: string[]): Buffer {
  const payload = Buffer.from(fields.map((f) => `${f}\0`).join(""), "utf8");
  const frame = Buffer.allocUnsafe(4 + payload.length);
  frame.writeUInt32LE(payload.length, 0);
  payload.copy(frame, 4);
  return frame;
}

const isAgain = (error: unknown) => (error as NodeJS.ErrnoException).code === "EAGAIN";

export class SpawnerChannel {
  private readonly queue: Request[] = [];
  private inFlight: Request | undefined;
  private readonly outbox: Outgoing[] = [];
  private readonly buffer = Buffer.alloc(256);
  private text = "";
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  /**
   * Both descriptors are non-blocking; the channel owns and closes them. onLost runs once when the spawner stops
   * answering (REPLY_TIMEOUT_MS) or a pipe breaks; the channel is closed by then.
   */
  constructor(
    private readonly requestFd: number,
    private readonly replyFd: number,
    private readonly onLost: () => void,
  ) {}

  /** Start requests not answered yet (in flight or waiting their turn). */
  get pending(): number {
    return this.queue.length + (this.inFlight ? 1 : 0);
  }

  /** Sends a start request; resolves with its answer. Answered at once when the spawner is quick (the usual case). */
  request(fields: string[]): Promise<StartAnswer> {
    if (this.closed) return Promise.resolve({ kind: "unsent" });
    return new Promise((resolve) => {
      this.queue.push({ frame: encodeFrame(fields), resolve, sent: false, deadline: 0 });
      this.next();
    });
  }

  /** Sends a frame that has no answer ("k", "r"): in order with the starts, never blocking. */
  send(fields: string[]): void {
    if (this.closed) return;
    this.outbox.push({ bytes: encodeFrame(fields), at: 0 });
    if (this.flush() && this.outbox.length > 0) this.schedule();
  }

  /** Closes both pipes: the request in flight is lost (unsent if not all of it was written), the waiting ones unsent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.timer);
    for (const fd of [this.requestFd, this.replyFd]) {
      try {
        fs.closeSync(fd);
      } catch {
        // Already closed.
      }
    }
    const inFlight = this.inFlight;
    this.inFlight = undefined;
    inFlight?.resolve(inFlight.sent ? { kind: "lost" } : { kind: "unsent" });
    for (const waiting of this.queue.splice(0)) waiting.resolve({ kind: "unsent" });
    this.outbox.length = 0;
  }

  private next(): void {
    if (this.inFlight || this.closed) return;
    const request = this.queue.shift();
    if (!request) return;
    this.inFlight = request;
    request.deadline = performance.now() + REPLY_TIMEOUT_MS;
    this.outbox.push({ bytes: request.frame, at: 0, onWritten: () => (request.sent = true) });
    if (!this.flush()) return;
    const started = performance.now();
    for (;;) {
      if (this.readAnswer()) return;
      const waited = performance.now() - started;
      if (waited >= REPLY_BLOCKING_MS) break;
      if (waited > REPLY_SPIN_MS) Atomics.wait(waitCell, 0, 0, REPLY_SLEEP_MS);
    }
    this.schedule();
  }

  /** Writes what the request pipe takes now; false when it broke (the channel is then closed). */
  private flush(): boolean {
    while (this.outbox.length > 0) {
      const head = this.outbox[0]!;
      try {
        head.at += fs.writeSync(this.requestFd, head.bytes, head.at);
      } catch (error) {
        if (isAgain(error)) return true;
        this.lost();
        return false;
      }
      if (head.at < head.bytes.length) continue;
      this.outbox.shift();
      head.onWritten?.();
    }
    return true;
  }

  /** Reads what the reply pipe holds; true once the request in flight is settled (answered, or the pipe broke). */
  private readAnswer(): boolean {
    let n: number;
    try {
      n = fs.readSync(this.replyFd, this.buffer, 0, this.buffer.length, null);
    } catch (error) {
      if (isAgain(error)) return false;
      this.lost();
      return true;
    }
    if (n === 0) {
      // The spawner died: its end of the reply pipe closed.
      this.lost();
      return true;
    }
    this.text += this.buffer.toString("utf8", 0, n);
    const newline = this.text.indexOf("\n");
    if (newline === -1) return false;
    const line = this.text.slice(0, newline);
    this.text = this.text.slice(newline + 1);
    const request = this.inFlight;
    this.inFlight = undefined;
    request?.resolve({ kind: "reply", line });
    // The next start waits for a later turn of the event loop, so that no turn blocks longer than one request's bound.
    if (this.queue.length > 0) setImmediate(() => this.next());
    return true;
  }

  private schedule(): void {
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => this.service(), REPLY_POLL_INTERVAL_MS);
  }

  /** The timer's turn: write what waits, read the answer, give the spawner up past the deadline. */
  private service(): void {
    this.timer = undefined;
    if (this.closed || !this.flush()) return;
    const request = this.inFlight;
    if (request && !this.readAnswer() && performance.now() >= request.deadline) {
      this.lost();
      return;
    }
    if (this.inFlight || this.outbox.length > 0) this.schedule();
  }

  private lost(): void {
    if (this.closed) return;
    this.close();
    this.onLost();
  }
}
