// The PTY's master side as node-pty reads it: reading paused at the handle while the emulator catches up, and every
// byte the program wrote read before the stream closes, whatever ends it (the program's exit, a stop, the bridge).
import { readFileSync, readSync } from "node:fs";
import type { Socket } from "node:net";
import type { IPty } from "@lydell/node-pty";

/** How long after the exit a stream still open is read before it is closed anyway (a child may hold the terminal). */
export const EXIT_DRAIN_MAX_MS = 5000;
/** One synchronous read of what the kernel still holds: its PTY buffers hold about 64 KiB in all. */
const DRAIN_READ_BYTES = 64 * 1024;
/**
 * The most one drain reads: far more than the kernel holds, yet an end to it when a process the command left behind
 * still holds the terminal and writes as fast as it is read (only possible on the forced close).
 */
const MAX_DRAIN_BYTES = 1024 * 1024;
/** O_NONBLOCK in /proc/self/fdinfo's octal flags (Linux's value on every architecture the bridge runs on). */
const O_NONBLOCK = 0o4000;

export interface ReadFlow {
  stop(): void;
  start(): void;
}

/**
 * Stops and restarts reading the PTY at its handle, so a flood waits in the kernel (the program blocks on its
 * write). Pausing the stream instead would let it read ahead into its own buffer, and the read error (EIO) that
 * follows the process's exit destroys that buffer with the last output in it. Falls back to pause/resume.
 */
export function readFlow(pty: IPty): ReadFlow {
  const socket = socketOf(pty);
  const handle = socket?._handle as { readStop?(): number; readStart?(): number } | undefined;
  if (socket && handle && typeof handle.readStop === "function" && typeof handle.readStart === "function") {
    // A closed stream's handle is gone: there is nothing left to pause or resume.
    return {
      stop: () => void (socket.destroyed || handle.readStop!()),
      start: () => void (socket.destroyed || handle.readStart!()),
    };
  }
  return { stop: () => pty.pause(), start: () => pty.resume() };
}

export interface KeepOutputOptions {
  /** Bytes read from the PTY outside node-pty's data events, in order after them. */
  onChunk(chunk: Buffer): void;
  /** The process exited while the stream is open: reading must flow (not stay paused) so it can drain and close. */
  onExitPending(): void;
}

/**
 * Makes the stream close only after the kernel has handed over all the program wrote. Two things dropped the end
 * of the output (measured: up to 12 KiB of a 64 KiB print-and-exit, in half the runs):
 * - libuv ends a read stream when the fd reports POLLHUP after a short read, without reading again
 *   (libuv/libuv#4992, fixed upstream after the libuv in Node 20). A PTY's master reports POLLHUP as soon as the
 *   last slave closes, while the kernel still holds output: so on that premature end, the fd is read to the end
 *   synchronously before Node closes it. The fd is non-blocking (libuv sets it), and with the slave closed a read
 *   answers EIO once empty, so this never waits.
 * - node-pty destroys the stream 200 ms after the process exits if it has not closed (a macOS workaround), which
 *   drops what is still unread whenever the event loop is busy. That destroy is deferred, with reading flowing,
 *   until the stream closes by itself or EXIT_DRAIN_MAX_MS pass; then what is left is read before it closes.
 */
export function keepOutputPastExit(pty: IPty, options: KeepOutputOptions): void {
  const socket = socketOf(pty);
  const fd = (pty as unknown as { _fd?: unknown })._fd;
  if (!socket || typeof socket.destroy !== "function" || typeof fd !== "number") return;
  const drain = () => {
    if (!socket.destroyed) drainNonBlocking(fd, options.onChunk);
  };
  socket.once("end", drain);
  const destroy = socket.destroy.bind(socket);
  let deferred = false;
  socket.destroy = ((error?: Error) => {
    // A stream that ended or failed (EIO: the kernel has nothing more) closes now; so does a second request.
    if (deferred || error || socket.destroyed || socket.readableEnded) {
      drain();
      return destroy(error);
    }
    deferred = true;
    options.onExitPending();
    const timer = setTimeout(() => {
      drain();
      destroy();
    }, EXIT_DRAIN_MAX_MS);
    socket.once("close", () => clearTimeout(timer));
    return socket;
  }) as typeof socket.destroy;
}

/** Reads what the kernel holds for a non-blocking fd until it answers EAGAIN (empty) or EIO (other side closed). */
function drainNonBlocking(fd: number, onChunk: (chunk: Buffer) => void): void {
  if (!isNonBlocking(fd)) return;
  const buffer = Buffer.allocUnsafe(DRAIN_READ_BYTES);
  for (let drained = 0; drained < MAX_DRAIN_BYTES;) {
    let read: number;
    try {
      read = readSync(fd, buffer, 0, buffer.length, null);
    } catch {
      return;
    }
    if (read === 0) return;
    drained += read;
    onChunk(Buffer.from(buffer.subarray(0, read)));
  }
}

/** A blocking read on a PTY whose program is still running would stall the bridge: read only a non-blocking fd. */
function isNonBlocking(fd: number): boolean {
  try {
    const flags = /^flags:\s*([0-7]+)$/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, "utf8"))?.[1];
    return flags !== undefined && (parseInt(flags, 8) & O_NONBLOCK) !== 0;
  } catch {
    return false;
  }
}

function socketOf(pty: IPty): (Socket & { _handle?: unknown }) | undefined {
  return (pty as unknown as { _socket?: Socket & { _handle?: unknown } })._socket;
}
