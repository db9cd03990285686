// The resident spawner (native/urlbridge-spawner.c): one small process, started by the bridge on first need and
// again after it dies, that forks the sandbox launcher per command so the bridge never fork()s its own large
// address space (libuv starts every child with a plain fork: ~4.5 ms per 100 MiB of bridge, on the event loop).
// Only the bridge can talk to it: through pipes it opened itself from /proc/<spawner>/fd (same uid), never a
// path in the filesystem. URLBRIDGE_SPAWNER=off (useSpawner) keeps the direct spawn, the fallback when it cannot start.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";

/**
 * How long one start request may wait for the spawner's answer (blocking the event loop) before the spawner is
 * given up as hung and killed, which ends the commands it runs (reported spawner_lost). Its answer comes within
 * a fork of 1.5 MiB; the bound is generous so that a stalled machine does not cost running commands.
 */
const REPLY_TIMEOUT_MS = 5000;
/**
 * How long the answer is polled for without sleeping: it comes within the fork of a 1 MiB process (tens of
 * microseconds), and a sleep (Atomics.wait) costs ~0.1 ms of timer slack. Past this, each check sleeps.
 */
const REPLY_SPIN_MS = 1;
const REPLY_POLL_MS = 0.05;
/** Spawners that die before they are ready, in a row, before the bridge stops trying (direct spawn from then on). */
const MAX_FAILED_STARTS = 3;
const SPAWNER_NAME = "urlbridge-spawner";
/** After the spawner exits, how long its last events may take to be read before its launchers count as lost. */
const EVENTS_DRAIN_MS = 250;
/** A spawner that has not said "ready" by then is given up (and counts as a failed start). */
const READY_TIMEOUT_MS = 5000;

/** How a launcher started through the spawner ended. */
export interface SpawnerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The launcher's --status-fd line ("" when it wrote none). */
  status: string;
  /** The spawner died before it reported this launcher (the launcher then ended its tree by itself). */
  lost: boolean;
}

export interface SpawnerChild {
  pid: number;
  stdout: net.Socket;
  stderr: net.Socket;
  exited: Promise<SpawnerExit>;
  /** Signals the launcher, only while the spawner has not reaped it (no pid-reuse race). */
  kill(signal: NodeJS.Signals): void;
}

export interface SpawnRequest {
  /** The launcher binary: the spawner runs only its own launcher, so this must be it. */
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
}

interface Running {
  resolve(exit: SpawnerExit): void;
}

interface Spawner {
  process: ChildProcess;
  pid: number;
  launcher: string;
  requestFd: number | undefined;
  replyFd: number | undefined;
  running: Map<number, Running>;
  ready: boolean;
  lost: boolean;
}

let current: Spawner | undefined;
let failedStarts = 0;
let nextId = 0;
/** Launchers started through a spawner since the bridge started (diagnostics, and tests that a path is taken). */
let started = 0;
const waitCell = new Int32Array(new SharedArrayBuffer(4));

/** The spawner binary beside the launcher, or undefined when it was not built. */
function spawnerBinary(launcher: string): string | undefined {
  const candidate = path.join(path.dirname(launcher), SPAWNER_NAME);
  return fs.existsSync(candidate) ? candidate : undefined;
}

/** Set from the configuration (URLBRIDGE_SPAWNER) when a bridge starts; one spawner serves the whole process. */
let wanted = true;

/**
 * Turns the resident spawner on (the default) or off for this process: off, every command forks the launcher
 * from the bridge. A running spawner is left to finish the commands it started; new ones do not use it.
 */
export function useSpawner(on: boolean): void {
  wanted = on;
}

function enabled(): boolean {
  return wanted && process.platform === "linux" && failedStarts < MAX_FAILED_STARTS;
}

const signalName = (signo: number): NodeJS.Signals | null =>
  signo === 0 ? null : ((Object.entries(os.constants.signals).find(([, n]) => n === signo)?.[0] as NodeJS.Signals | undefined) ?? null);

function closeFd(fd: number | undefined): void {
  if (fd === undefined) return;
  try {
    fs.closeSync(fd);
  } catch {
    // Already closed.
  }
}

/** The spawner is gone (or given up): every launcher it had not reported is reported lost. */
function lose(spawner: Spawner): void {
  if (current === spawner) current = undefined;
  if (spawner.lost) return;
  spawner.lost = true;
  closeFd(spawner.requestFd);
  closeFd(spawner.replyFd);
  spawner.requestFd = spawner.replyFd = undefined;
  try {
    spawner.process.kill("SIGKILL");
  } catch {
    // Already gone.
  }
  for (const run of spawner.running.values()) run.resolve({ code: null, signal: null, status: "", lost: true });
  spawner.running.clear();
}

function onEvent(spawner: Spawner, line: string): void {
  const ready = /^ready (\d+) (\d+)$/.exec(line);
  if (ready) {
    try {
      spawner.requestFd = fs.openSync(`/proc/${spawner.pid}/fd/${ready[1]}`, fs.constants.O_WRONLY);
      spawner.replyFd = fs.openSync(`/proc/${spawner.pid}/fd/${ready[2]}`, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
      spawner.ready = true;
      failedStarts = 0;
    } catch {
      // /proc/<pid>/fd is closed to us (a hardened /proc): the direct spawn stays.
      failedStarts = MAX_FAILED_STARTS;
      lose(spawner);
    }
    return;
  }
  const exit = /^x (\d+) (-?\d+) (\d+) ?(.*)$/.exec(line);
  if (!exit) return;
  const id = Number(exit[1]);
  const run = spawner.running.get(id);
  spawner.running.delete(id);
  const code = Number(exit[2]);
  run?.resolve({ code: code < 0 ? null : code, signal: signalName(Number(exit[3])), status: exit[4] ?? "", lost: false });
}

function startSpawner(launcher: string): void {
  const binary = spawnerBinary(launcher);
  if (!binary) {
    failedStarts = MAX_FAILED_STARTS;
    return;
  }
  // An empty environment: the spawner needs none, and each command brings its own scrubbed one.
  const child = spawn(binary, [String(process.pid), launcher], { stdio: ["ignore", "pipe", "pipe"], env: {}, detached: true });
  if (child.pid === undefined) {
    failedStarts++;
    child.on("error", () => undefined);
    return;
  }
  const spawner: Spawner = { process: child, pid: child.pid, launcher, requestFd: undefined, replyFd: undefined, running: new Map(), ready: false, lost: false };
  current = spawner;
  let partial = "";
  child.stdout!.setEncoding("utf8");
  child.stdout!.on("data", (chunk: string) => {
    const lines = (partial + chunk).split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) onEvent(spawner, line);
  });
  child.stderr!.resume();
  child.on("error", () => undefined);
  const notReady = setTimeout(() => {
    if (spawner.ready) return;
    failedStarts++;
    lose(spawner);
  }, READY_TIMEOUT_MS);
  notReady.unref();
  const stdoutClosed = new Promise<void>((resolve) => child.stdout!.once("close", () => resolve()));
  child.once("exit", () => {
    clearTimeout(notReady);
    if (!spawner.ready && !spawner.lost) failedStarts++;
    if (current === spawner) current = undefined;
    // Exits it reported just before it died are still in the pipe: read them first (bounded), then lose the rest.
    void Promise.race([stdoutClosed, new Promise((resolve) => setTimeout(resolve, EVENTS_DRAIN_MS))]).then(() => lose(spawner));
  });
  // Neither the spawner nor its pipes keep the bridge's event loop alive.
  child.unref();
  (child.stdout as net.Socket).unref();
  (child.stderr as net.Socket).unref();
}

function writeFrame(fd: number, fields: string[]): void {
  const payload = Buffer.from(fields.map((f) => `${f}\0`).join(""), "utf8");
  const frame = Buffer.allocUnsafe(4 + payload.length);
  frame.writeUInt32LE(payload.length, 0);
  payload.copy(frame, 4);
  for (let at = 0; at < frame.length; ) at += fs.writeSync(fd, frame, at);
}

/** The spawner's one-line answer to a start request, read synchronously and bounded; undefined when none came. */
function readReply(fd: number): string | undefined {
  const buf = Buffer.alloc(256);
  let text = "";
  const started = performance.now();
  const deadline = started + REPLY_TIMEOUT_MS;
  for (let now = started; now < deadline; now = performance.now()) {
    let n: number;
    try {
      n = fs.readSync(fd, buf, 0, buf.length, null);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EAGAIN") return undefined;
      if (now - started > REPLY_SPIN_MS) Atomics.wait(waitCell, 0, 0, REPLY_POLL_MS);
      continue;
    }
    if (n === 0) return undefined; // the spawner died
    text += buf.toString("utf8", 0, n);
    if (text.endsWith("\n")) return text.slice(0, -1);
  }
  return undefined;
}

/** A read end the spawner holds, opened through /proc as our own descriptor and wrapped as a stream. */
function openOutput(spawner: Spawner, fd: string): net.Socket {
  const own = fs.openSync(`/proc/${spawner.pid}/fd/${fd}`, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  return new net.Socket({ fd: own, readable: true, writable: false });
}

/** Why a start through the spawner failed after the launcher may already have run: the caller must not retry. */
export class SpawnerLost extends Error {}

/**
 * Starts the launcher through the spawner. Undefined when the spawner is off, not built, not ready yet (the
 * first command starts it and spawns directly) or could not fork (nothing ran): the caller spawns directly.
 * Throws SpawnerLost when the spawner died or hung mid-request, since a launcher may then have started.
 */
export function spawnThroughSpawner(request: SpawnRequest): SpawnerChild | undefined {
  if (!enabled()) return undefined;
  // The spawner runs only the launcher it was started with; another one (never the case today) spawns directly.
  if (current && current.launcher !== request.file) return undefined;
  if (!current) {
    startSpawner(request.file);
    return undefined;
  }
  const spawner = current;
  if (!spawner.ready || spawner.requestFd === undefined || spawner.replyFd === undefined) return undefined;
  const id = ++nextId;
  const env = Object.entries(request.env).map(([k, v]) => `${k}=${v}`);
  const argv = [request.file, ...request.args];
  let reply: string | undefined;
  try {
    writeFrame(spawner.requestFd, ["s", String(id), request.cwd, String(argv.length), ...argv, String(env.length), ...env]);
    reply = readReply(spawner.replyFd);
  } catch {
    reply = undefined;
  }
  if (reply === undefined) {
    lose(spawner);
    throw new SpawnerLost("the spawner did not answer a start request");
  }
  if (reply.startsWith("E ")) return undefined;
  const [pid, out, err] = reply.split(" ").map(Number) as [number, number, number];
  let stdout: net.Socket, stderr: net.Socket;
  try {
    stdout = openOutput(spawner, String(out));
    stderr = openOutput(spawner, String(err));
  } catch {
    lose(spawner);
    throw new SpawnerLost("the command's output pipes could not be opened");
  }
  const exited = new Promise<SpawnerExit>((resolve) => spawner.running.set(id, { resolve }));
  started++;
  writeFrame(spawner.requestFd, ["r", String(id)]);
  let reported = false;
  void exited.then(() => (reported = true));
  return {
    pid,
    stdout,
    stderr,
    exited,
    kill(signal) {
      if (reported || spawner.requestFd === undefined) return;
      try {
        writeFrame(spawner.requestFd, ["k", String(id), String(os.constants.signals[signal])]);
      } catch {
        lose(spawner);
      }
    },
  };
}

/** How many launchers spawners have started in this process. */
export function spawnedThroughSpawner(): number {
  return started;
}

/** The running spawner's pid (tests and diagnostics), or undefined. */
export function spawnerPid(): number | undefined {
  return current?.ready ? current.pid : undefined;
}
