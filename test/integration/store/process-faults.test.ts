// Runs the real server (node --import tsx server/main.ts) with a preload that raises faults on signals, the way a
// stray error would escape the bridge's own handlers, and checks which ones it serves through and which end it.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { FAULT_EXIT_CODE, judgeFault } from "../../../server/main.js";
import { makeTempDir, TEST_OPERATOR_TOKEN } from "../../helpers/bridge.js";

const REPO = path.resolve(import.meta.dirname, "../../..");
const CHILD_START_TIMEOUT_MS = 20_000;
const WAIT_TRIES = 200;
const children: ChildProcess[] = [];

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

// SIGUSR2: a rejected promise nobody awaits, carrying a store error; SIGWINCH: a TypeError thrown from a callback.
const FAULT_PRELOAD = `
process.on("SIGUSR2", () => {
  Promise.reject(Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" }));
});
process.on("SIGWINCH", () => {
  setImmediate(() => { throw new TypeError("fault injected by the test"); });
});
`;

interface ServerProcess {
  child: ChildProcess;
  controlUrl: string;
  log: () => string;
  exited: Promise<number | null>;
}

async function startServer(): Promise<ServerProcess> {
  const stateDir = makeTempDir("fault-state");
  const preload = path.join(makeTempDir("fault-preload"), "faults.mjs");
  fs.writeFileSync(preload, FAULT_PRELOAD);
  const child = spawn(process.execPath, ["--import", "tsx", "--import", preload, path.join(REPO, "server/main.ts")], {
    cwd: REPO,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: stateDir,
      URLBRIDGE_STATE_DIR: stateDir,
      URLBRIDGE_CONTROL_PORT: "0",
      URLBRIDGE_DATA_PORT: "0",
      URLBRIDGE_OPERATOR_TOKEN: TEST_OPERATOR_TOKEN,
      URLBRIDGE_LOG_LEVEL: "info",
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  children.push(child);
  let log = "";
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${log}`)), CHILD_START_TIMEOUT_MS);
    void exited.then((code) => reject(new Error(`server exited (${code}) before listening:\n${log}`)));
    child.stderr!.on("data", (data: Buffer) => {
      log += data.toString();
      const controlUrl = /control plane on (\S+)/.exec(log)?.[1];
      if (controlUrl && /data plane on (\S+)/.test(log)) {
        clearTimeout(timer);
        resolve({ child, controlUrl, log: () => log, exited });
      }
    });
  });
}

async function logUntil(server: ServerProcess, pattern: RegExp): Promise<string> {
  for (let i = 0; i < WAIT_TRIES && !pattern.test(server.log()); i++) await sleep(25);
  return server.log();
}

describe("process-level fault handlers", () => {
  it.each([
    [{ code: "SQLITE_FULL" }, "continue"],
    [{ code: "SQLITE_BUSY" }, "continue"],
    [{ code: "SQLITE_IOERR_WRITE" }, "continue"],
    [{ code: "ECONNRESET" }, "continue"],
    [{ code: "EPIPE" }, "continue"],
    [{ code: "SQLITE_CONSTRAINT_UNIQUE" }, "exit"],
    [new TypeError("x is undefined"), "exit"],
    ["a thrown string", "exit"],
    [undefined, "exit"],
  ])("judges %o: %s", (error, action) => {
    expect(judgeFault(error).action).toBe(action);
  });

  it("serves on after a stray store error, and exits 70 with a clear message after an unexpected exception", async () => {
    const server = await startServer();
    const health = async () => (await fetch(`${server.controlUrl}/api/health`)).status;
    expect(await health()).toBe(200);

    server.child.kill("SIGUSR2");
    expect(await logUntil(server, /unhandled rejection, serving on/)).toMatch(/unhandled rejection, serving on: the state store refused a write/);
    expect(await health()).toBe(200);
    expect(server.child.exitCode).toBeNull();

    server.child.kill("SIGWINCH");
    expect(await server.exited).toBe(FAULT_EXIT_CODE);
    const log = server.log();
    expect(log).toContain("urlbridge: fatal uncaught exception: TypeError: fault injected by the test");
    expect(log).toContain(`urlbridge: exiting with code ${FAULT_EXIT_CODE} because an unexpected error escaped every handler`);
  });
});
