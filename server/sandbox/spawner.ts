// The resident spawner (native/urlbridge-spawner.c): one small process, started by the bridge on first need and
// again after it dies, that forks the sandbox launcher per command so the bridge never fork()s its own large
// address space (libuv starts every child with a plain fork: ~4.5 ms per 100 MiB of bridge, on the event loop).
// Only the bridge can talk to it: through pipes it opened itself from /proc/<spawner>/fd (same uid), never a
// path in the filesystem (spawner-channel.ts). URLBRIDGE_SPAWNER=off (useSpawner) keeps the direct spawn, the
// fallback when it cannot start. Its stderr lines go to the bridge's log (setSpawnerLog), bounded.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import type { Logger } from "../log.js";
import { SpawnerChannel } from "./spawner-channel.js";

/** Spawners that die before they are ready, in a row, before the bridge stops trying (direct spawn from then on). */
const MAX_FAILED_STARTS = 3;
const SPAWNER_NAME = "urlbridge-spawner";
/** After the spawner exits, how long its last events may take to be read before its launchers count as lost. */
const EVENTS_DRAIN_MS = 250;
/** A spawner that has not said "ready" by then is given up (and counts as a failed start). */
const READY_TIMEOUT_MS = 5000;
/** Stderr lines of one spawner forwarded to the log, and the length each is cut to: a looping failure cannot flood it. */
const MAX_LOGGED_LINES = 20;
const MAX_LOGGED_LINE_CHARS = 300;

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
  channel: SpawnerChannel | undefined;
  running: Map<number, Running>;
  ready: boolean;
  lost: boolean;
}

let current: Spawner | undefined;
let failedStarts = 0;
let nextId = 0;
/** Launchers started through a spawner since the bridge started (diagnostics, and tests that a path is taken). */
let started = 0;
/** Where the spawner's own stderr goes (the latest bridge's logger; none: discarded). */
let logger: Logger | undefined;

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

/** The logger that receives the spawner's stderr (why it failed to start or died), a bounded number of lines. */
export function setSpawnerLog(log: Logger | undefined): void {
  logger = log;
}

function enabled(): boolean {
  return wanted && process.platform === "linux" && failedStarts < MAX_FAILED_STARTS;
}

const signalName = (signo: number): NodeJS.Signals | null =>
  signo === 0
    ? null
    : ((Object.entries(os.constants.signals).find(([, n]) => n === signo)?.[0] as NodeJS.Signals | undefined) ?? null);

/** The spawner is gone (or given up): every launcher it had not reported is reported lost. */
function lose(spawner: Spawner): void {
  if (current === spawner) current = undefined;
  if (spawner.lost) return;
  spawner.lost = true;
  spawner.channel?.close();
  spawner.channel = undefined;
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
    let requestFd: number | undefined;
    try {
      requestFd = fs.openSync(`/proc/${spawner.pid}/fd/${ready[1]}`, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
      const replyFd = fs.openSync(
        `/proc/${spawner.pid}/fd/${ready[2]}`,
        fs.constants.O_RDONLY | fs.constants.O_NONBLOCK,
      );
      spawner.channel = new SpawnerChannel(requestFd, replyFd, () => lose(spawner));
      spawner.ready = true;
      failedStarts = 0;
    } catch {
      // /proc/<pid>/fd is closed to us (a hardened /proc): the direct spawn stays.
      if (requestFd !== undefined && !spawner.channel) fs.closeSync(requestFd);
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
  run?.resolve({
    code: code < 0 ? null : code,
    signal: signalName(Number(exit[3])),
    status: exit[4] ?? "",
    lost: false,
  });
}

function startSpawner(launcher: string): void {
  const binary = spawnerBinary(launcher);
  if (!binary) {
    failedStarts = MAX_FAILED_STARTS;
    return;
  }
  // An empty environment: the spawner needs none, and each command brings its own scrubbed one.
  const child = spawn(binary, [String(process.pid), launcher], {
    stdio: ["ignore", "pipe", "pipe"],
    env: {},
    detached: true,
  });
  if (child.pid === undefined) {
    failedStarts++;
    child.on("error", () => undefined);
    return;
  }
  const spawner: Spawner = {
    process: child,
    pid: child.pid,
    launcher,
    channel: undefined,
    running: new Map(),
    ready: false,
    lost: false,
  };
  current = spawner;
  let partial = "";
  child.stdout!.setEncoding("utf8");
  child.stdout!.on("data", (chunk: string) => {
    const lines = (partial + chunk).split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) onEvent(spawner, line);
  });
  forwardStderr(child.stderr!, child.pid);
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
    void Promise.race([stdoutClosed, new Promise((resolve) => setTimeout(resolve, EVENTS_DRAIN_MS))]).then(() =>
      lose(spawner),
    );
  });
  // Neither the spawner nor its pipes keep the bridge's event loop alive.
  child.unref();
  (child.stdout as net.Socket).unref();
  (child.stderr as net.Socket).unref();
}

/** The spawner's stderr (a failed start, a refused request), line by line into the log, at most MAX_LOGGED_LINES. */
function forwardStderr(stream: NodeJS.ReadableStream, pid: number): void {
  let partial = "";
  let logged = 0;
  stream.setEncoding("utf8");
  stream.on("data", (chunk: string) => {
    const lines = (partial + chunk).split("\n");
    partial = lines.pop()!.slice(0, MAX_LOGGED_LINE_CHARS);
    for (const line of lines) {
      if (line === "" || logged >= MAX_LOGGED_LINES) continue;
      logged++;
      logger?.warn(`command spawner (pid ${pid}): ${line.slice(0, MAX_LOGGED_LINE_CHARS)}`);
      if (logged === MAX_LOGGED_LINES)
        logger?.warn(`command spawner (pid ${pid}): further stderr lines are not logged`);
    }
  });
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
 * first command starts it and spawns directly), could not fork, or was lost before this request reached it
 * (nothing ran): the caller spawns directly. Rejects with SpawnerLost when the spawner died or hung after it had
 * the request, since a launcher may then have started. Resolves at once when the spawner answers within
 * REPLY_BLOCKING_MS (the usual case); otherwise the event loop runs while the answer is awaited.
 */
export async function spawnThroughSpawner(request: SpawnRequest): Promise<SpawnerChild | undefined> {
  if (!enabled()) return undefined;
  // The spawner runs only the launcher it was started with; another one (never the case today) spawns directly.
  if (current && current.launcher !== request.file) return undefined;
  if (!current) {
    startSpawner(request.file);
    return undefined;
  }
  const spawner = current;
  const channel = spawner.channel;
  if (!spawner.ready || !channel) return undefined;
  const id = ++nextId;
  const env = Object.entries(request.env).map(([k, v]) => `${k}=${v}`);
  const argv = [request.file, ...request.args];
  // Registered before the request: a launcher that ends at once is reported on the events pipe, which can be
  // read before an answer that was waited for on a timer.
  const exited = new Promise<SpawnerExit>((resolve) => spawner.running.set(id, { resolve }));
  const answer = await channel.request([
    "s",
    String(id),
    request.cwd,
    String(argv.length),
    ...argv,
    String(env.length),
    ...env,
  ]);
  if (answer.kind !== "reply" || answer.line.startsWith("E ")) spawner.running.delete(id);
  if (answer.kind === "unsent") return undefined;
  if (answer.kind === "lost") {
    lose(spawner);
    throw new SpawnerLost("the spawner did not answer a start request");
  }
  if (answer.line.startsWith("E ")) return undefined;
  const [pid, out, err] = answer.line.split(" ").map(Number) as [number, number, number];
  let stdout: net.Socket, stderr: net.Socket;
  try {
    stdout = openOutput(spawner, String(out));
    stderr = openOutput(spawner, String(err));
  } catch {
    lose(spawner);
    throw new SpawnerLost("the command's output pipes could not be opened");
  }
  started++;
  channel.send(["r", String(id)]);
  let reported = false;
  void exited.then(() => (reported = true));
  return {
    pid,
    stdout,
    stderr,
    exited,
    kill(signal) {
      if (!reported) channel.send(["k", String(id), String(os.constants.signals[signal])]);
    },
  };
}

/** How many launchers spawners have started in this process. */
export function spawnedThroughSpawner(): number {
  return started;
}

/** Start requests waiting for the running spawner's answer (tests and diagnostics). */
export function pendingSpawnerStarts(): number {
  return current?.channel?.pending ?? 0;
}

/** The running spawner's pid (tests and diagnostics), or undefined. */
export function spawnerPid(): number | undefined {
  return current?.ready ? current.pid : undefined;
}
