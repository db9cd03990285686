// Run as a child process (node --import tsx) by test/integration/sandbox/inherited-fds.test.ts, which hands it one
// extra pipe at the fd named by argv[2]: inherited through exec, so open here without close-on-exec, as a runtime's
// IPC channel is. Runs `ls /proc/self/fd` through spawnCommand with the spawner off, then on, and prints one JSON
// line: whether that fd is inheritable here, and the descriptors each command saw.
import fs from "node:fs";
import { spawnCommand } from "../../server/mutation/terminal/terminal-spawn.js";
import { spawnedThroughSpawner, spawnerPid, useSpawner } from "../../server/sandbox/spawner.js";
import { commandFds, isInheritable } from "./fds.js";

const leaked = Number(process.argv[2]);
const cwd = process.argv[3]!;
const env = { PATH: "/usr/local/bin:/usr/bin:/bin" };

async function runListing(): Promise<number[]> {
  const command = await spawnCommand({ command: "ls /proc/self/fd", cwd, env, foreground: true });
  let output = "";
  command.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  await command.done;
  return commandFds(output);
}

async function main(): Promise<void> {
  const inheritable = fs.existsSync(`/proc/self/fd/${leaked}`) && isInheritable(leaked);
  useSpawner(false);
  const direct = await runListing();
  const directThroughSpawner = spawnedThroughSpawner() > 0;
  useSpawner(true);
  // The first command starts the spawner (and is spawned directly); the next goes through it.
  await runListing();
  for (let i = 0; i < 200 && spawnerPid() === undefined; i++) await new Promise((resolve) => setTimeout(resolve, 25));
  const before = spawnedThroughSpawner();
  const spawner = await runListing();
  process.stdout.write(
    `${JSON.stringify({ inheritable, direct, directThroughSpawner, spawner, spawnerUsed: spawnedThroughSpawner() === before + 1 })}\n`,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
