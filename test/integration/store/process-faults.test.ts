// Runs the real server (node --import tsx server/main.ts) with a preload that raises faults on signals, the way a
// stray error would escape the bridge's own handlers, and checks which ones it serves through and which end it.
import fs from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { FAULT_EXIT_CODE, judgeFault } from "../../../server/main.js";
import { makeTempDir } from "../../helpers/bridge.js";
import { killServerProcesses, startServerProcess, type ServerProcess } from "../../helpers/server-process.js";

const WAIT_TRIES = 200;

afterEach(killServerProcesses);

// SIGUSR2: a rejected promise nobody awaits, carrying a store error; SIGWINCH: a TypeError thrown from a callback.
const FAULT_PRELOAD = `
process.on("SIGUSR2", () => {
  Promise.reject(Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" }));
});
process.on("SIGWINCH", () => {
  setImmediate(() => { throw new TypeError("fault injected by the test"); });
});
`;

async function startServer(): Promise<ServerProcess> {
  const preload = path.join(makeTempDir("fault-preload"), "faults.mjs");
  fs.writeFileSync(preload, FAULT_PRELOAD);
  return startServerProcess({ stateDir: makeTempDir("fault-state"), preloads: [preload] });
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
    expect(await logUntil(server, /unhandled rejection, serving on/)).toMatch(
      /unhandled rejection, serving on: the state store refused a write/,
    );
    expect(await health()).toBe(200);
    expect(server.child.exitCode).toBeNull();

    server.child.kill("SIGWINCH");
    expect(await server.exited).toBe(FAULT_EXIT_CODE);
    const log = server.log();
    expect(log).toContain("urlbridge: fatal uncaught exception: TypeError: fault injected by the test");
    expect(log).toContain(
      `urlbridge: exiting with code ${FAULT_EXIT_CODE} because an unexpected error escaped every handler`,
    );
  });
});
