// Descriptors the bridge holds without close-on-exec (a runtime's IPC channel, a test runner's pipes, whatever the
// shell that started it left open) reach no command, on either start path: the launcher (native/urlbridge-sandbox.c) closes every descriptor
// above 2 but its --status-fd before it runs the command, as the resident spawner does before it forks it.
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { spawnCommand } from "../../../server/mutation/terminal/terminal-spawn.js";
import { spawnedThroughSpawner, spawnerPid, useSpawner } from "../../../server/sandbox/spawner.js";
import { makeTempDir } from "../../helpers/bridge.js";
import { commandFds } from "../../helpers/fds.js";
import { waitUntil } from "../mutation/terminal-helpers.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const CHILD = path.join(ROOT, "test", "helpers", "fd-listing-child.ts");
const dir = makeTempDir("inherited-fds");
const env = { PATH: "/usr/local/bin:/usr/bin:/bin" };
/** Where the child is handed its extra pipe: above whatever Node opens at start-up, below the launcher's limit. */
const LEAKED_FD = 40;
/** `ls /proc/self/fd` in a command given only stdio: 0, 1, 2, and ls's own handle on the folder. */
const ONLY_STDIO = [0, 1, 2, 3];

async function listing(): Promise<number[]> {
  const command = await spawnCommand({ command: "ls /proc/self/fd", cwd: dir, env, foreground: true });
  let output = "";
  command.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  expect(await command.done).toMatchObject({ exitCode: 0 });
  return commandFds(output);
}

describe("descriptors the bridge inherited", () => {
  it("reach no command started from this worker, with the spawner off and on", async () => {
    // Whether this worker holds any depends on how the runner was started (an interactive shell's pipes often leak
    // in; a CI runner's may not), so the next test hands a process one for certain. Here: stdio only, either way.
    useSpawner(false);
    try {
      const before = spawnedThroughSpawner();
      expect(await listing()).toEqual(ONLY_STDIO);
      expect(spawnedThroughSpawner()).toBe(before);
    } finally {
      useSpawner(true);
    }
    if (spawnerPid() === undefined) await listing();
    expect(await waitUntil(() => spawnerPid() !== undefined)).toBe(true);
    const before = spawnedThroughSpawner();
    expect(await listing()).toEqual(ONLY_STDIO);
    expect(spawnedThroughSpawner()).toBe(before + 1);
  });

  it("do not pass a descriptor opened without close-on-exec in the bridge's process to its commands", async () => {
    // Node opens nothing without close-on-exec, so the "bridge" is a child process handed a pipe at LEAKED_FD.
    const stdio: Array<"ignore" | "pipe"> = [
      "ignore",
      "pipe",
      "pipe",
      ...Array<"ignore">(LEAKED_FD - 3).fill("ignore"),
      "pipe",
    ];
    const child = spawn(process.execPath, ["--import", "tsx", CHILD, String(LEAKED_FD), dir], { cwd: ROOT, stdio });
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
    expect(stderr).toBe("");
    expect(code).toBe(0);
    const seen = JSON.parse(stdout) as {
      inheritable: boolean;
      direct: number[];
      directThroughSpawner: boolean;
      spawner: number[];
      spawnerUsed: boolean;
    };
    expect(seen).toEqual({
      inheritable: true,
      direct: ONLY_STDIO,
      directThroughSpawner: false,
      spawner: ONLY_STDIO,
      spawnerUsed: true,
    });
  });
});
