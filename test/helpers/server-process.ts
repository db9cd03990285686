// Runs the real server (`node --import tsx server/main.ts`) as a child process on ports 0, for tests that kill,
// restart or fault it, and reads the two URLs it logs once listening.
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { TEST_OPERATOR_TOKEN } from "./bridge.js";

const REPO = path.resolve(import.meta.dirname, "../..");
const CHILD_START_TIMEOUT_MS = 20_000;
const children: ChildProcess[] = [];

export interface ServerProcess {
  child: ChildProcess;
  controlUrl: string;
  dataUrl: string;
  /** Everything the server wrote to stderr so far. */
  log(): string;
  /** Resolves with the exit code when the process ends. */
  exited: Promise<number | null>;
}

export interface ServerProcessOptions {
  stateDir: string;
  env?: Record<string, string>;
  /** Extra `--import` modules loaded before the server (e.g. a fault-injection preload). */
  preloads?: string[];
  /** The entry script as typed on the command line; default <repo>/server/main.ts. */
  entry?: string;
  /** Runs the server as this uid (and the same gid), as `npm start` by an ordinary user would; default ours. */
  uid?: number;
  /** Starts the server under `ulimit -n` of this many descriptors (soft and hard), through /bin/sh. */
  openFileLimit?: number;
  /** false: run `entry` with plain node (a built bundle), without tsx or the preloads. Default true. */
  tsx?: boolean;
}

export function startServerProcess({
  stateDir,
  env = {},
  preloads = [],
  entry = path.join(REPO, "server/main.ts"),
  uid,
  openFileLimit,
  tsx = true,
}: ServerProcessOptions): Promise<ServerProcess> {
  const imports = tsx ? ["tsx", ...preloads].flatMap((module) => ["--import", module]) : [];
  const argv = [process.execPath, ...imports, entry];
  // `exec` keeps the pid the test signals the server's own.
  const [command, ...args] =
    openFileLimit === undefined ? argv : ["/bin/sh", "-c", `ulimit -n ${openFileLimit} && exec "$0" "$@"`, ...argv];
  const child = spawn(command!, args, {
    cwd: REPO,
    ...(uid === undefined ? {} : { uid, gid: uid }),
    env: {
      PATH: process.env.PATH ?? "",
      HOME: stateDir,
      URLBRIDGE_STATE_DIR: stateDir,
      URLBRIDGE_CONTROL_PORT: "0",
      URLBRIDGE_DATA_PORT: "0",
      URLBRIDGE_OPERATOR_TOKEN: TEST_OPERATOR_TOKEN,
      URLBRIDGE_LOG_LEVEL: "info",
      ...env,
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  children.push(child);
  let log = "";
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${log}`)), CHILD_START_TIMEOUT_MS);
    child.once("exit", (code, signal) =>
      reject(new Error(`server exited (${code ?? signal}) before listening:\n${log}`)),
    );
    child.stderr!.on("data", (data: Buffer) => {
      log += data.toString();
      const controlUrl = /control plane on (\S+)/.exec(log)?.[1];
      const dataUrl = /data plane on (\S+)/.exec(log)?.[1];
      if (controlUrl && dataUrl) {
        clearTimeout(timer);
        resolve({ child, controlUrl, dataUrl, log: () => log, exited });
      }
    });
  });
}

/** For afterEach: SIGKILLs every server process a test started that is still running. */
export function killServerProcesses(): void {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
}

/** Calls the control API of a server process with the test operator token; throws on a non-2xx answer. */
export async function controlApi<T>(server: ServerProcess, method: string, route: string, body?: unknown): Promise<T> {
  const res = await fetch(`${server.controlUrl}${route}`, {
    method,
    headers: {
      authorization: `Bearer ${TEST_OPERATOR_TOKEN}`,
      ...(body ? { "content-type": "application/json" } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  });
  if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}
