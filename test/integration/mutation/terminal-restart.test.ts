// A terminal intent running when the bridge is SIGKILLed: the resident spawner dies with the bridge and each
// sandbox launcher with the spawner (parent-death signals), which ends the command's tree (and a bg=1 one) at once; after a restart the intent is reported `interrupted` and is never re-run by
// itself. The bridge runs as a real child process.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { isGone, listTree, readStat } from "../../../server/mutation/terminal/process-tree.js";
import { encodeUrlText } from "../../../server/url-grammar/encode.js";
import { agentGet, giveToAgent, makeTempDir, TEST_OPERATOR_TOKEN } from "../../helpers/bridge.js";
import { waitUntil, type Body } from "./terminal-helpers.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const READY_TIMEOUT_MS = 20_000;

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Starts `server/main.ts` through tsx and resolves once the data plane listens. */
async function startServer(env: Record<string, string>): Promise<ChildProcess> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("URLBRIDGE_")));
  const child = spawn(process.execPath, ["--import", "tsx", path.join(ROOT, "server", "main.ts")], {
    cwd: ROOT,
    env: { ...base, ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let log = "";
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`bridge not ready: ${log}`)), READY_TIMEOUT_MS);
    child.stderr!.on("data", (chunk: Buffer) => {
      log += chunk.toString("utf8");
      if (log.includes("data plane on")) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`bridge exited early (${code}): ${log}`));
    });
  });
  child.stderr!.resume();
  return child;
}

const servers: ChildProcess[] = [];
const dirs: string[] = [];
const pids: number[] = [];

const parentOf = (pid: number): number | undefined => readStat(pid)?.ppid;

const commOf = (pid: number) =>
  fs.existsSync(`/proc/${pid}/comm`) ? fs.readFileSync(`/proc/${pid}/comm`, "utf8").trim() : undefined;

function childrenOf(pid: number): number[] {
  const tasks = fs.existsSync(`/proc/${pid}/task`) ? fs.readdirSync(`/proc/${pid}/task`) : [];
  return tasks.flatMap((tid) =>
    fs.readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").split(" ").filter(Boolean).map(Number),
  );
}

afterAll(() => {
  for (const server of servers) if (server.exitCode === null && server.signalCode === null) server.kill("SIGKILL");
  for (const pid of pids) if (!isGone(pid)) process.kill(pid, "SIGKILL");
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

// Both ways a launcher starts: forked by the resident spawner (the default), and by the bridge itself.
describe.each([
  { path: "through the resident spawner", spawner: true },
  { path: "with URLBRIDGE_SPAWNER=off", spawner: false },
])("terminal intent across a crash, $path", ({ spawner: viaSpawner }) => {
  it("is reported interrupted after a restart, never re-run, and its tree does not outlive the crash", async () => {
    const stateDir = makeTempDir("restart-state");
    const projectDir = makeTempDir("restart-project");
    dirs.push(stateDir, projectDir);
    giveToAgent(projectDir);
    const [dataPort, controlPort] = [await freePort(), await freePort()];
    const env = {
      ...(viaSpawner ? {} : { URLBRIDGE_SPAWNER: "off" }),
      URLBRIDGE_STATE_DIR: stateDir,
      URLBRIDGE_DATA_PORT: String(dataPort),
      URLBRIDGE_CONTROL_PORT: String(controlPort),
      URLBRIDGE_OPERATOR_TOKEN: TEST_OPERATOR_TOKEN,
      URLBRIDGE_BROWSE_ROOTS: os.tmpdir(),
      URLBRIDGE_LOG_LEVEL: "info",
    };
    const first = await startServer(env);
    servers.push(first);
    const api = async (route: string, body: unknown) => {
      const res = await fetch(`http://127.0.0.1:${controlPort}${route}`, {
        method: "POST",
        headers: { authorization: `Bearer ${TEST_OPERATOR_TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      return (await res.json()) as { id: string; initUrl: string };
    };
    const project = await api("/api/projects", {
      name: "crash",
      root: projectDir,
      permissions: { write: false, terminal: true },
    });
    const session = await api("/api/sessions", { projectId: project.id });
    const init = await agentGet<{ bases: { m: string } }>(session.initUrl);
    // The first command starts the resident spawner (and is itself spawned directly); the rest go through it.
    expect(await agentGet<Body>(`${init.bases.m}/x?raw=true`)).toMatchObject({ ok: true });
    if (viaSpawner)
      expect(
        await waitUntil(() => childrenOf(first.pid!).some((pid) => commOf(pid) === "urlbridge-spawn"), 10_000),
      ).toBe(true);
    const background = await agentGet<Body>(
      `${init.bases.m}/x?bg=1&raw=${encodeUrlText("setsid sleep 300 & echo $! > daemon.pid; wait")}`,
    );
    expect(background).toMatchObject({ ok: true, mode: "background" });
    expect(await waitUntil(() => fs.existsSync(path.join(projectDir, "daemon.pid")), 10_000)).toBe(true);
    const daemonPid = Number(fs.readFileSync(path.join(projectDir, "daemon.pid"), "utf8"));
    pids.push(daemonPid);

    const url = `${init.bases.m}/x?wait=0&raw=${encodeUrlText("echo $$ > shell.pid; echo ran >> count.log; sleep 300")}`;
    const accepted = await agentGet<Body>(url);
    expect(["pending", "running"]).toContain(accepted.state);
    expect(await waitUntil(() => fs.existsSync(path.join(projectDir, "count.log")), 10_000)).toBe(true);
    const shellPid = Number(fs.readFileSync(path.join(projectDir, "shell.pid"), "utf8"));
    pids.push(shellPid);
    const running = await agentGet<Body>(String(accepted.poll).replace(/wait=\d+/, "wait=0"));
    expect(running.state).toBe("running");

    // bridge -> spawner -> launcher -> shell: the bridge forked none of the command's processes itself.
    // With the spawner off: bridge -> launcher -> shell.
    const launcher = parentOf(shellPid)!;
    expect(commOf(launcher)).toBe("urlbridge-sandb");
    const spawner = viaSpawner ? parentOf(launcher)! : undefined;
    if (spawner !== undefined) {
      expect(commOf(spawner)).toBe("urlbridge-spawn");
      expect(parentOf(spawner)).toBe(first.pid);
    } else expect(parentOf(launcher)).toBe(first.pid);

    const exited = new Promise((resolve) => first.once("exit", resolve));
    first.kill("SIGKILL");
    await exited;
    // The spawner dies with the bridge (its parent-death signal), each launcher with its parent.
    expect(await waitUntil(() => (spawner === undefined || isGone(spawner)) && isGone(launcher))).toBe(true);
    expect(await waitUntil(() => isGone(daemonPid))).toBe(true);
    // Before the launcher, a crash left the detached tree running until recovery ended it (orphanEnded: true).
    // Now the launcher gets SIGTERM when the bridge dies (PR_SET_PDEATHSIG) and ends the tree itself.
    expect(await waitUntil(() => isGone(shellPid) && listTree(shellPid).length === 0)).toBe(true);

    servers.push(await startServer(env));

    const replay = await agentGet<Body>(url);
    expect(replay).toMatchObject({
      ok: false,
      state: "failed",
      dedupe: "replayed",
      errorCode: "interrupted",
      errorDetail: { phase: "running", started: true, orphanEnded: false },
    });
    expect(String(replay.retry)).toMatch(/[?&]run=[A-Za-z0-9._:-]+&raw=/);
    expect(fs.readFileSync(path.join(projectDir, "count.log"), "utf8")).toBe("ran\n");
  });
});
