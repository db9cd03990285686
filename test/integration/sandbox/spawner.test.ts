// The resident spawner (native/urlbridge-spawner.c) with real processes: commands are forked by it, not by the
// bridge; their output is on real pipes; a spawner killed mid-command ends the command's tree and reports it
// lost (and /x answers interrupted); the next command starts a new spawner; its stderr reaches the bridge's log;
// URLBRIDGE_SPAWNER=off spawns directly.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isGone, readStat } from "../../../server/mutation/terminal/process-tree.js";
import { spawnCommand, type SpawnedCommand } from "../../../server/mutation/terminal/terminal-spawn.js";
import { probeLauncher } from "../../../server/sandbox/launcher.js";
import { createLogger } from "../../../server/log.js";
import { setSpawnerLog, spawnedThroughSpawner, spawnerPid, useSpawner } from "../../../server/sandbox/spawner.js";
import { encodeUrlText } from "../../../server/url-grammar/encode.js";
import { agentGet, makeTempDir, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";
import { waitUntil, type Body } from "../mutation/terminal-helpers.js";

const dir = makeTempDir("spawner");
const landlock = (probeLauncher()?.landlock ?? 0) > 0;
const env = { PATH: "/usr/local/bin:/usr/bin:/bin" };

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const parentOf = (pid: number): number | undefined => readStat(pid)?.ppid;

async function run(command: string, foreground = true): Promise<SpawnedCommand & { output: () => string }> {
  const spawned = await spawnCommand({ command, cwd: dir, env, foreground });
  let output = "";
  spawned.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  spawned.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  return Object.assign(spawned, { output: () => output });
}

/** The spawner starts on first need: one command spawned directly, then it answers. */
async function readySpawner(): Promise<number> {
  if (spawnerPid() === undefined) await (await run("true")).done;
  expect(await waitUntil(() => spawnerPid() !== undefined)).toBe(true);
  return spawnerPid()!;
}

/** A file the command writes, read once it exists. */
async function readWhenWritten(name: string): Promise<string> {
  const file = path.join(dir, name);
  expect(await waitUntil(() => fs.existsSync(file) && fs.readFileSync(file, "utf8").endsWith("\n"), 10_000)).toBe(true);
  return fs.readFileSync(file, "utf8").trim();
}

describe("the resident spawner", () => {
  it("forks the launcher itself, and the shell writes to real pipes", async () => {
    const spawner = await readySpawner();
    expect(parentOf(spawner)).toBe(process.pid);
    const command = await run(
      "ls -l /proc/self/fd/1 /proc/self/fd/2; echo to-dev-stdout > /dev/stdout; echo $PPID > launcher.pid; exit 3",
    );
    const end = await command.done;
    expect(end).toMatchObject({ exitCode: 3, signal: null, leftovers: 0, spawnerLost: false });
    expect(command.output()).toMatch(/\/proc\/self\/fd\/1 -> pipe:/);
    expect(command.output()).toMatch(/\/proc\/self\/fd\/2 -> pipe:/);
    expect(command.output()).toContain("to-dev-stdout\n");
    // The shell's parent is the launcher, whose parent was the spawner (the launcher is gone by now).
    expect(Number(await readWhenWritten("launcher.pid"))).toBe(command.pid);
  });

  it("hands the launcher only /dev/null, its two output pipes and the status pipe, and the shell only the first three", async () => {
    await readySpawner();
    const command = await run("ls /proc/self/fd; echo --; ls /proc/$PPID/fd");
    expect(await command.done).toMatchObject({ exitCode: 0 });
    // ls's own listing of /proc/self/fd holds one more descriptor while it reads the folder.
    const [shell, launcher] = command
      .output()
      .split("--\n")
      .map((part) =>
        part
          .trim()
          .split("\n")
          .map(Number)
          .sort((a, b) => a - b),
      );
    expect(shell).toEqual([0, 1, 2, 3]);
    expect(launcher).toEqual([0, 1, 2, 3]);
  });

  it("reports a signal and a leftover count exactly as the direct spawn does", async () => {
    await readySpawner();
    const killed = await (await run("kill -TERM $$")).done;
    expect(killed).toMatchObject({ signal: "SIGTERM", exitCode: null, spawnerLost: false });
    const left = await (await run("sleep 30 & sleep 30 & echo started")).done;
    expect(left).toMatchObject({ exitCode: 0, leftovers: 2 });
  });

  it("stops a command's whole tree through the spawner", async () => {
    await readySpawner();
    const command = await run("setsid sleep 300 & echo $! > stop-daemon.pid; sleep 300", false);
    const daemon = Number(await readWhenWritten("stop-daemon.pid"));
    expect(parentOf(command.pid!)).toBe(spawnerPid());
    await command.stop();
    expect(command.running()).toBe(false);
    expect(await waitUntil(() => isGone(daemon))).toBe(true);
  });

  it("ends the tree of a command whose spawner is killed, reports it lost, and the next command gets a new spawner", async () => {
    const spawner = await readySpawner();
    const foreground = await run("echo $$ > lost-shell.pid; sleep 300");
    const background = await run("setsid sleep 300 & echo $! > lost-daemon.pid; wait", false);
    const shell = Number(await readWhenWritten("lost-shell.pid"));
    const daemon = Number(await readWhenWritten("lost-daemon.pid"));
    expect(parentOf(foreground.pid!)).toBe(spawner);
    process.kill(spawner, "SIGKILL");
    const [fgEnd, bgEnd] = await Promise.all([foreground.done, background.done]);
    expect(fgEnd.spawnerLost).toBe(true);
    expect(bgEnd.spawnerLost).toBe(true);
    // Each launcher's parent-death signal made it end its tree, setsid'd daemon included.
    expect(
      await waitUntil(() => isGone(shell) && isGone(daemon) && isGone(foreground.pid!) && isGone(background.pid!)),
    ).toBe(true);

    const next = await readySpawner();
    expect(next).not.toBe(spawner);
    const after = await run("echo again");
    expect(await after.done).toMatchObject({ exitCode: 0, spawnerLost: false });
    expect(after.output()).toBe("again\n");
  });

  it("gives up a hung spawner after a bounded wait: the command is reported lost, not run twice, and the next one runs", async () => {
    const spawner = await readySpawner();
    process.kill(spawner, "SIGSTOP");
    const command = await run("echo never > hung.txt");
    expect(command.pid).toBeUndefined();
    expect(await command.done).toMatchObject({ spawnerLost: true });
    expect(await waitUntil(() => isGone(spawner))).toBe(true);
    expect(fs.existsSync(path.join(dir, "hung.txt"))).toBe(false);
    const next = await run("echo after");
    expect(await next.done).toMatchObject({ exitCode: 0, spawnerLost: false });
    expect(next.output()).toBe("after\n");
    expect(await readySpawner()).not.toBe(spawner);
  });

  it("forwards the spawner's stderr to the bridge's log, and a start it never took whole runs no command twice", async () => {
    const spawner = await readySpawner();
    const lines: string[] = [];
    setSpawnerLog(createLogger("warn", (line) => lines.push(line)));
    try {
      // A start request over the spawner's frame bound (4 MiB) makes it exit with a message on its stderr.
      const start = spawnCommand({
        command: "echo never",
        cwd: dir,
        env: { ...env, HUGE: "x".repeat(5 << 20) },
        foreground: true,
      });
      // It never had the whole request, so it is not reported lost: the bridge spawns directly, which the kernel
      // refuses for an environment this large.
      await expect(start).rejects.toThrow(/E2BIG/);
      expect(await waitUntil(() => isGone(spawner))).toBe(true);
      expect(
        await waitUntil(() =>
          lines.some((line) => line.includes(`command spawner (pid ${spawner}): urlbridge-spawner: request frame`)),
        ),
      ).toBe(true);
    } finally {
      setSpawnerLog(undefined);
    }
    expect(await readySpawner()).not.toBe(spawner);
  });

  it("URLBRIDGE_SPAWNER=off starts the launcher from the bridge itself", async () => {
    useSpawner(false);
    try {
      const command = await run("echo $PPID > direct.pid; echo direct; sleep 300", false);
      expect(Number(await readWhenWritten("direct.pid"))).toBe(command.pid);
      expect(parentOf(command.pid!)).toBe(process.pid);
      await command.stop();
      expect(await command.done).toMatchObject({ spawnerLost: false });
      expect(command.output()).toBe("direct\n");
    } finally {
      useSpawner(true);
    }
  });
});

describe("/x when the spawner dies under it", () => {
  let t: TestBridge;
  let s: AgentSession;
  beforeAll(async () => {
    t = await startTestBridge();
    s = await t.session({ terminal: true, write: true });
  });
  afterAll(() => t.close());

  it("runs /g's confined rg through the spawner, with the same answer", async () => {
    fs.mkdirSync(path.join(t.projectDir, "src"), { recursive: true });
    fs.writeFileSync(path.join(t.projectDir, "src", "a.txt"), "one needle\ntwo\nneedle three\n");
    fs.writeFileSync(path.join(t.projectDir, "src", "b.txt"), "no match\n");
    await readySpawner();
    const before = spawnedThroughSpawner();
    const body = await agentGet<Body>(`${s.r}/g?path=src&raw=needle`);
    expect(body).toMatchObject({ ok: true, engine: "rg", matchedLines: 2 });
    expect(spawnedThroughSpawner()).toBe(before + 1);
  });

  // Landlock's ptrace rule closes /proc/<pid>/fd of processes outside the command's sandbox; scoped signals
  // (ABI 6) or the identity drop (as root) stop the signal. Without Landlock commands are not confined at all.
  it.skipIf(!landlock || !(probeLauncher()?.signals || process.getuid?.() === 0))(
    "is out of a command's reach: no /proc/<spawner>/fd or environ, no signal",
    async () => {
      const spawner = await readySpawner();
      const probe = [
        `ls /proc/${spawner}/fd >/dev/null 2>&1; echo "fd=$?"`,
        `cat /proc/${spawner}/environ >/dev/null 2>&1; echo "environ=$?"`,
        `kill -0 ${spawner} 2>/dev/null; echo "signal=$?"`,
      ].join("; ");
      const body = await agentGet<Body>(`${s.m}/x?raw=${encodeUrlText(probe)}`);
      expect(body).toMatchObject({ ok: true, exitCode: 0 });
      expect(body.stdout).toMatch(/^fd=[1-9]\d*\nenviron=[1-9]\d*\nsignal=[1-9]\d*\n$/);
      expect(spawnerPid()).toBe(spawner);
    },
  );

  it("answers interrupted with reason spawner_lost, and the next /x runs", async () => {
    const spawner = await readySpawner();
    const url = `${s.m}/x?wait=0&raw=${encodeUrlText("echo $$ > x-lost.pid; sleep 300")}`;
    const accepted = await agentGet<Body>(url);
    const shellPid = path.join(t.projectDir, "x-lost.pid");
    expect(
      await waitUntil(() => fs.existsSync(shellPid) && fs.readFileSync(shellPid, "utf8").endsWith("\n"), 10_000),
    ).toBe(true);
    process.kill(spawner, "SIGKILL");
    let body = await agentGet<Body>(String(accepted.poll));
    for (let i = 0; i < 40 && (body.state === "pending" || body.state === "running"); i++)
      body = await agentGet<Body>(String(body.poll));
    expect(body).toMatchObject({
      ok: false,
      state: "failed",
      errorCode: "interrupted",
      errorDetail: { started: true, reason: "spawner_lost" },
    });
    expect(await waitUntil(() => isGone(Number(fs.readFileSync(shellPid, "utf8"))))).toBe(true);

    const again = await agentGet<Body>(`${s.m}/x?raw=echo+ok`);
    expect(again).toMatchObject({ ok: true, stdout: "ok\n" });
  });
});
