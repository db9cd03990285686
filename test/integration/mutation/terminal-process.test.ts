// Process-level behaviour of the terminal runner with real child processes (no gateway).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isGone } from "../../../server/mutation/terminal/process-tree.js";
import { TerminalProcesses } from "../../../server/mutation/terminal/terminal-processes.js";
import { runForeground } from "../../../server/mutation/terminal/terminal-run.js";
import { buildChildEnv } from "../../../server/sandbox/env-scrub.js";

const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "urlbridge-term-"));
afterAll(() => fs.rmSync(cwd, { recursive: true, force: true }));
const env = buildChildEnv().env;
const processes = new TerminalProcesses();
const run = (command: string, timeoutMs = 20_000) => runForeground({ command, cwd, env, timeoutMs, processes });

async function waitUntil(check: () => boolean, ms = 5000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return check();
}

describe("runForeground", () => {
  it("returns exact stdout, stderr and exit code", async () => {
    const result = await run(`printf 'a "b" é\\n'; printf 'oops' >&2; exit 3`);
    expect(result).toMatchObject({ exitCode: 3, signal: null, timedOut: false });
    expect(result.stdout.text).toBe('a "b" é\n');
    expect(result.stderr.text).toBe("oops");
  });

  it("runs in the given directory with a closed stdin", async () => {
    const result = await run("pwd; cat; echo done");
    expect(result.stdout.text).toBe(`${cwd}\ndone\n`);
  });

  it("bounds large output and says how much was omitted", async () => {
    const result = await run("seq 1 200000");
    expect(result.exitCode).toBe(0);
    expect(result.stdout.truncated).toBe(true);
    expect(result.stdout.text.startsWith("1\n2\n3\n")).toBe(true);
    expect(result.stdout.text.endsWith("199999\n200000\n")).toBe(true);
    expect(result.stdout.text).toContain(`${result.stdout.omittedBytes} bytes omitted`);
  });

  it("on timeout kills the whole tree, grandchildren included", async () => {
    const pidFile = path.join(cwd, "grandchild.pid");
    const result = await run(`bash -c 'sleep 300 & echo $! > ${pidFile}; wait'`, 1500);
    expect(result.timedOut).toBe(true);
    expect(result.signal).not.toBeNull();
    const grandchild = Number(fs.readFileSync(pidFile, "utf8"));
    expect(grandchild).toBeGreaterThan(1);
    expect(await waitUntil(() => isGone(grandchild))).toBe(true);
  });

  it("kills a descendant that left the process group on timeout", async () => {
    const pidFile = path.join(cwd, "escaped.pid");
    const result = await run(`setsid sleep 300 & echo $! > ${pidFile}; wait`, 1500);
    expect(result.timedOut).toBe(true);
    const escaped = Number(fs.readFileSync(pidFile, "utf8"));
    expect(await waitUntil(() => isGone(escaped))).toBe(true);
  });

  it("ends background jobs the command leaves behind when its shell exits", async () => {
    const pidFile = path.join(cwd, "leftover.pid");
    const result = await run(`sleep 300 > /dev/null 2>&1 & echo $! > ${pidFile}; echo started`);
    expect(result.exitCode).toBe(0);
    expect(result.stdout.text).toBe("started\n");
    expect(result.leftoversKilled).toBe(1);
    const leftover = Number(fs.readFileSync(pidFile, "utf8"));
    expect(await waitUntil(() => isGone(leftover))).toBe(true);
  });

  it("does not hang when a leftover job holds the output pipe", async () => {
    const result = await run("sleep 300 & echo held");
    expect(result.timedOut).toBe(false);
    expect(result.stdout.text).toBe("held\n");
    expect(result.leftoversKilled).toBe(1);
  });
});
