// bg=1 launches at the process level, with a real Node HTTP server as the child (no gateway).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { isGone } from "../../../server/mutation/terminal/process-tree.js";
import {
  launchBackground as launchWith,
  listBackground,
  MAX_BACKGROUND_PROCESSES,
  type LaunchOptions,
} from "../../../server/mutation/terminal/terminal-background.js";
import { TerminalProcesses } from "../../../server/mutation/terminal/terminal-processes.js";
import { buildChildEnv } from "../../../server/sandbox/env-scrub.js";
import { writeAsAgent } from "../../helpers/bridge.js";

const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "urlbridge-bg-"));
const shutdown = new AbortController();
const env = buildChildEnv().env;
writeAsAgent(
  path.join(cwd, "server.cjs"),
  `const http = require("node:http");
const server = http.createServer((req, res) => res.end("hello from " + process.pid));
server.listen(0, "127.0.0.1", () => console.log("ready at http://127.0.0.1:" + server.address().port + "/"));
`,
);

/** The registry a bridge's runtime would own; every launch here joins it. */
const processes = new TerminalProcesses();
const launchBackground = (options: Omit<LaunchOptions, "processes">) => launchWith({ ...options, processes });

afterEach(async () => processes.end({ kind: "background" }, "shutdown"));
afterAll(() => {
  shutdown.abort();
  fs.rmSync(cwd, { recursive: true, force: true });
});

async function waitUntil(check: () => boolean, ms = 5000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return check();
}

describe("launchBackground", () => {
  it("reports the address a real HTTP server prints, and the server answers there", async () => {
    const result = await launchBackground({ command: "node server.cjs", cwd, env, signal: shutdown.signal });
    expect(result.state).toBe("running");
    expect(result.startup).toBe("announced");
    expect(result.detectedUrls).toHaveLength(1);
    const url = result.detectedUrls[0]!;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(result.detectedPorts).toEqual([Number(new URL(url).port)]);
    expect(result.transcript.text).toBe(`ready at ${url}\n`);
    const body = await (await fetch(url)).text();
    expect(body).toMatch(/^hello from \d+$/);
    expect(listBackground(processes).map((p) => p.pid)).toContain(result.pid);
    expect(fs.readFileSync(result.logFile, "utf8")).toContain(url);
    expect(result.logFile.startsWith(cwd)).toBe(false);
  });

  it("reports a process that dies during start-up, with its exit code and last words", async () => {
    const result = await launchBackground({
      command: "echo starting; echo 'port in use' >&2; exit 4",
      cwd,
      env,
      signal: shutdown.signal,
    });
    expect(result).toMatchObject({ state: "exited", exitCode: 4, startup: "exited" });
    expect(result.transcript.text).toContain("port in use");
  });

  it("keeps watching the whole window when nothing is announced", async () => {
    const result = await launchBackground({
      command: "echo compiling; sleep 30",
      cwd,
      env,
      signal: shutdown.signal,
      windowMs: 400,
    });
    expect(result).toMatchObject({ state: "running", startup: "window", detectedUrls: [], detectedPorts: [] });
  });

  it("ends background processes when the bridge shuts down", async () => {
    const local = new AbortController();
    const result = await launchBackground({ command: "sleep 300", cwd, env, signal: local.signal, windowMs: 100 });
    expect(isGone(result.pid)).toBe(false);
    local.abort();
    expect(await waitUntil(() => isGone(result.pid))).toBe(true);
    expect(await waitUntil(() => !listBackground(processes).some((p) => p.pid === result.pid))).toBe(true);
  });

  it("refuses a launch beyond the background limit", async () => {
    for (let i = 0; i < MAX_BACKGROUND_PROCESSES; i++) {
      await launchBackground({ command: "sleep 300", cwd, env, signal: shutdown.signal, windowMs: 50 });
    }
    await expect(
      launchBackground({ command: "sleep 300", cwd, env, signal: shutdown.signal, windowMs: 50 }),
    ).rejects.toMatchObject({
      code: "background_limit_reached",
    });
  });
});
