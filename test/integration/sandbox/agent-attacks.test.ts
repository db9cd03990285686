// A hostile agent's terminal commands against the bridge's own processes (the s24 safety review of issue 10's
// guarantees after the resident spawner and the MCP socket): from /x, agent-probe.py tries to list and open for
// writing every /proc/<pid>/fd/N of the bridge and its spawner (sending a spawner start frame into each it opens),
// read their environ and mem, ptrace and signal them, with the same attempts on a child of its own as the positive
// control; then the control port on loopback, and a project registered under a system folder the launcher's 5 s
// real-path cache already holds. Three ways, to say which layer holds what: a root bridge (the appliance: uid
// switch + Landlock), the probe run as the project owner's uid outside any sandbox against a root bridge (the uid
// switch alone: a root bridge without Landlock), and a real bridge process started as an ordinary user (`npm start`:
// Landlock alone, the command runs as the bridge's own uid).
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { probeLauncher } from "../../../server/sandbox/launcher.js";
import { spawnedThroughSpawner, spawnerPid } from "../../../server/sandbox/spawner.js";
import { encodeUrlText } from "../../../server/url-grammar/encode.js";
import {
  agentGet,
  makeTempDir,
  startTestBridge,
  TEST_AGENT_UID,
  TEST_OPERATOR_TOKEN,
  type AgentSession,
  type TestBridge,
} from "../../helpers/bridge.js";
import { controlApi, startServerProcess, type ServerProcess } from "../../helpers/server-process.js";
import { settle, waitUntil } from "../mutation/terminal-helpers.js";

const probe = probeLauncher();
const landlock = (probe?.landlock ?? 0) > 0;
const asRoot = process.getuid?.() === 0;
const PYTHON = "/usr/bin/python3";
const PROBE_SCRIPT = fs.readFileSync(path.join(import.meta.dirname, "agent-probe.py"), "utf8");

interface Attempts {
  fdList: string;
  environ: string;
  mem: string;
  cmdline: string;
  writableFds: number;
  ptrace: string;
  signal: string;
}
interface ProbeResult {
  [name: string]: Attempts | Record<string, string>;
  inherited: Record<string, string>;
}

let commands = 0;
/** Runs a command through /x; each text is made unique, since the journal answers a repeated GET with its record. */
const x = (base: string, command: string) => settle(`${base}/x?raw=${encodeUrlText(`${command} # ${++commands}`)}`);

/** Writes the probe into the project (as an agent would) and runs it from /x against the named pids. */
async function runProbe(base: string, projectDir: string, targets: Record<string, number>): Promise<ProbeResult> {
  fs.writeFileSync(path.join(projectDir, "agent-probe.py"), PROBE_SCRIPT, { mode: 0o644 });
  const args = Object.entries(targets)
    .map(([name, pid]) => `${name}=${pid}`)
    .join(" ");
  const body = await x(base, `${PYTHON} agent-probe.py ${args}`);
  expect(body).toMatchObject({ ok: true, exitCode: 0 });
  return JSON.parse(String(body.stdout)) as ProbeResult;
}

/**
 * What every attempt on a process outside the command's sandbox must answer. Listing /proc/<pid>/fd is not in it:
 * the folder is its owner's (0500), so a command of the same uid lists the numbers; reading or opening an entry is
 * the ptrace check, which Landlock refuses.
 */
const SEALED = { fdLink: "EACCES", environ: "EACCES", mem: "EACCES", writableFds: 0, ptrace: "EPERM", signal: "EPERM" };

function expectOwnChildReachable(result: ProbeResult): void {
  // The same attempts work on a process of the command's own sandbox: the refusals above are real, not a broken probe.
  expect(result.ownChild).toEqual({ fdList: "ok", environ: "ok", ptrace: "ok" });
}

function expectOnlyStdio(result: ProbeResult): void {
  // Nothing of the bridge's or the spawner's is inherited: /dev/null and the two output pipes (the listing's own
  // descriptor is gone by the time it is read).
  expect(Object.keys(result.inherited).sort()).toEqual(["0", "1", "2"]);
  expect(result.inherited["0"]).toBe("/dev/null");
  expect(result.inherited["1"]).toMatch(/^pipe:/);
  expect(result.inherited["2"]).toMatch(/^pipe:/);
}

describe.skipIf(!landlock || !asRoot || !fs.existsSync(PYTHON))(
  "a command of a root bridge (uid switch + Landlock)",
  () => {
    let t: TestBridge;
    let s: AgentSession;
    const optDir = path.join("/opt", `urlbridge-audit-${process.pid}`);
    beforeAll(async () => {
      t = await startTestBridge();
      s = await t.session({ terminal: true, write: true });
    });
    afterAll(async () => {
      await t.close();
      fs.rmSync(optDir, { recursive: true, force: true });
    });

    it("cannot open, write, read, ptrace or signal the bridge or its spawner; its own child it can", async () => {
      // The spawner starts on the first command; the second goes through it.
      await x(s.m!, "true");
      expect(await waitUntil(() => spawnerPid() !== undefined)).toBe(true);
      const spawner = spawnerPid()!;
      const before = spawnedThroughSpawner();
      const result = await runProbe(s.m!, t.projectDir, { bridge: process.pid, spawner });
      expect(result.bridge).toMatchObject({ ...SEALED, fdList: "EACCES" });
      expect(result.spawner).toMatchObject({ ...SEALED, fdList: "EACCES" });
      expectOwnChildReachable(result);
      expectOnlyStdio(result);
      // Only the probe's own launch went through the spawner, which is still the same and still serves.
      expect(spawnedThroughSpawner()).toBe(before + 1);
      expect(spawnerPid()).toBe(spawner);
      expect((await x(s.m!, "id -u")).stdout).toBe(`${TEST_AGENT_UID}\n`);
    });

    it("cannot reach another command's process, of another session of its project or of another project", async () => {
      const same = await t.session({ terminal: true, root: t.projectDir, name: "same-project" });
      const otherRoot = makeTempDir("attacks-other");
      const other = await t.session({ terminal: true, root: otherRoot, name: "other-project" });
      const pids: Record<string, number> = {};
      for (const [name, session, dir] of [
        ["sameProject", same, t.projectDir],
        ["otherProject", other, otherRoot],
      ] as const) {
        const launched = await settle(
          `${session.m}/x?bg=1&raw=${encodeUrlText(`echo $$ > ${name}.pid; exec sleep 300`)}`,
        );
        expect(launched).toMatchObject({ ok: true, processState: "running" });
        const file = path.join(dir, `${name}.pid`);
        expect(await waitUntil(() => fs.existsSync(file) && fs.readFileSync(file, "utf8").endsWith("\n"))).toBe(true);
        pids[name] = Number(fs.readFileSync(file, "utf8"));
      }
      const result = await runProbe(s.m!, t.projectDir, pids);
      // Same uid (the project owner's) as the probe: only Landlock (ptrace rule, scoped signals) keeps them apart,
      // and the fd numbers of a process of the same uid can be listed.
      expect(result.sameProject).toMatchObject({ ...SEALED, fdList: "ok" });
      expect(result.otherProject).toMatchObject({ ...SEALED, fdList: "ok" });
      expectOwnChildReachable(result);
      for (const pid of Object.values(pids)) process.kill(pid, 0);
    });

    it("gets 401 from the control API on loopback without the operator token, and with a guessed one", async () => {
      const api = `${t.bridge.controlUrl}/api/sessions`;
      const body = await x(
        s.m!,
        `curl -s -o /dev/null -w '%{http_code} ' ${api}; curl -s -o /dev/null -w '%{http_code}' -H 'authorization: Bearer ${"g".repeat(43)}' ${api}`,
      );
      expect(body.stdout).toBe("401 401");
    });

    it("cannot read a project registered under a system folder whose real path the launcher has cached", async () => {
      await x(s.m!, "true"); // caches the system folders' real paths (launcher-paths.ts, 5 s)
      fs.mkdirSync(optDir, { recursive: true });
      fs.writeFileSync(path.join(optDir, "secret.txt"), "opt project's secret\n");
      const other = await t.session({ terminal: true, root: optDir, name: "opt-project" });
      const body = await x(s.m!, `cat ${optDir}/secret.txt; ls ${optDir}`);
      expect(String(body.stdout)).not.toContain("secret");
      expect(String(body.stderr)).toMatch(/Permission denied/);
      // Its own commands read it: the refusal is the exclusion, not a missing folder.
      expect((await x(other.m!, "cat secret.txt")).stdout).toBe("opt project's secret\n");
    });
  },
);

// What the uid switch alone gives (a root bridge on a kernel without Landlock, `auto`: commands run as the project
// owner, unconfined): the same probe run directly as uid 1000, outside any sandbox, against a root bridge.
describe.skipIf(!asRoot || !fs.existsSync(PYTHON))(
  "a process of the project owner's uid outside any sandbox (the uid switch alone)",
  () => {
    let t: TestBridge;
    let s: AgentSession;
    beforeAll(async () => {
      t = await startTestBridge();
      s = await t.session({ terminal: true });
    });
    afterAll(async () => t.close());

    const asOwner = (file: string, args: string[]) =>
      execFileSync(file, args, {
        uid: TEST_AGENT_UID,
        gid: TEST_AGENT_UID,
        cwd: "/",
        encoding: "utf8",
        env: { PATH: "/usr/bin:/bin" },
        timeout: 20_000,
      });

    it("cannot open, write, read, ptrace or signal the root bridge or its spawner, nor enter the state dir or its socket", async () => {
      await x(s.m!, "true");
      expect(await waitUntil(() => spawnerPid() !== undefined)).toBe(true);
      const script = path.join(makeTempDir("owner-probe"), "agent-probe.py");
      fs.writeFileSync(script, PROBE_SCRIPT, { mode: 0o644 });
      fs.chmodSync(path.dirname(script), 0o755);
      const result = JSON.parse(
        asOwner(PYTHON, [script, `bridge=${process.pid}`, `spawner=${spawnerPid()!}`]),
      ) as ProbeResult;
      expect(result.bridge).toMatchObject({ ...SEALED, fdList: "EACCES" });
      expect(result.spawner).toMatchObject({ ...SEALED, fdList: "EACCES" });
      expectOwnChildReachable(result);
      const socket = path.join(t.stateDir, "mcp.sock");
      const reach = `import os, socket\nfor p in ${JSON.stringify([t.stateDir, path.join(t.stateDir, "capability-key")])}:\n    try:\n        open(p, "rb") if p.endswith("key") else os.listdir(p); print("ok")\n    except OSError as e: print(e.strerror)\ns = socket.socket(socket.AF_UNIX)\ntry:\n    s.connect(${JSON.stringify(socket)}); print("connected")\nexcept OSError as e: print(e.strerror)\n`;
      expect(asOwner(PYTHON, ["-c", reach])).toBe("Permission denied\nPermission denied\nPermission denied\n");
    });
  },
);

/** Everything the ordinary-user bridge needs, owned by that user as `npm start` would leave it. */
function userDir(prefix: string, mode = 0o755): string {
  const dir = makeTempDir(prefix);
  fs.chmodSync(dir, mode);
  fs.chownSync(dir, TEST_AGENT_UID, TEST_AGENT_UID);
  return dir;
}

/** A real bridge process (`node --import tsx server/main.ts`) running as uid TEST_AGENT_UID. */
function startUserBridge(stateDir: string, scratch: string): Promise<ServerProcess> {
  return startServerProcess({
    stateDir,
    uid: TEST_AGENT_UID,
    env: { URLBRIDGE_SCRATCH_DIR: scratch, URLBRIDGE_UNKNOWN_TOKEN_THROTTLE: "0" },
  });
}

/** The child of `parent` whose name is the spawner's (comm is cut to 15 bytes). */
function spawnerOf(parent: number): number | undefined {
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, "utf8");
      const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === parent && comm.startsWith("urlbridge-spawn")) return Number(name);
    } catch {
      // Gone meanwhile.
    }
  }
  return undefined;
}

// The column "ordinary user, Landlock ABI >= 6" of SECURITY.md's table: no uid switch, the same uid as the bridge,
// so only Landlock (its ptrace rule covers /proc/<pid>/fd, environ and mem; ABI 6 scopes signals) stands between.
describe.skipIf(!landlock || !probe?.signals || !asRoot || !fs.existsSync(PYTHON))(
  "a command of a bridge run as an ordinary user (Landlock alone)",
  () => {
    let bridge: ServerProcess;
    let stateDir: string;
    let projectDir: string;
    let m: string;
    let r: string;
    const api = <T>(method: string, route: string, body?: unknown) => controlApi<T>(bridge, method, route, body);
    beforeAll(async () => {
      stateDir = userDir("user-state", 0o700);
      projectDir = userDir("user-project");
      bridge = await startUserBridge(stateDir, userDir("user-scratch", 0o700));
      const project = await api<{ id: string }>("POST", "/api/projects", {
        name: "user-project",
        root: projectDir,
        permissions: { write: true, terminal: true },
      });
      const session = await api<{ initUrl: string }>("POST", "/api/sessions", { projectId: project.id });
      const init = await agentGet<{ bases: { r: string; m: string } }>(session.initUrl);
      ({ r, m } = init.bases);
    }, 60_000);
    afterAll(async () => {
      if (bridge?.child.exitCode === null) {
        bridge.child.kill("SIGTERM");
        await new Promise((resolve) => bridge.child.once("exit", resolve));
      }
    });

    it("runs as the bridge's own uid, and still cannot open, write, read, ptrace or signal the bridge or its spawner", async () => {
      expect((await x(m, "id -u")).stdout).toBe(`${TEST_AGENT_UID}\n`);
      expect(await waitUntil(() => spawnerOf(bridge.child.pid!) !== undefined)).toBe(true);
      const spawner = spawnerOf(bridge.child.pid!)!;
      const result = await runProbe(m, projectDir, { bridge: bridge.child.pid!, spawner });
      // Same uid: the numbers of the bridge's descriptors can be listed, none of them read, opened or written.
      expect(result.bridge).toMatchObject({ ...SEALED, fdList: "ok" });
      expect(result.spawner).toMatchObject({ ...SEALED, fdList: "ok" });
      expectOwnChildReachable(result);
      expectOnlyStdio(result);
      expect(spawnerOf(bridge.child.pid!)).toBe(spawner);
    });

    it("inherits none of the bridge's environment: no URLBRIDGE_ variable, no operator token", async () => {
      // The bridge was started with URLBRIDGE_OPERATOR_TOKEN in its environment (and deletes it after reading it).
      const body = await x(m, "env");
      expect(body).toMatchObject({ ok: true, exitCode: 0 });
      expect(String(body.stdout)).toMatch(/^HOME=/m);
      expect(String(body.stdout)).not.toContain(TEST_OPERATOR_TOKEN);
      expect(String(body.stdout)).not.toMatch(/^URLBRIDGE_/m);
    });

    it("cannot read the state dir, the database or the capability key (Landlock: the same uid owns them)", async () => {
      const body = await x(
        m,
        `ls ${stateDir}; cat ${stateDir}/capability-key; cat ${stateDir}/urlbridge.sqlite | head -c 16`,
      );
      expect(String(body.stdout)).toBe("");
      expect(String(body.stderr).match(/Permission denied/g)?.length).toBe(3);
    });

    // Landlock before ABI 8 has no rule for connect() on a path-named socket: the MCP socket is reachable by the
    // same uid. It opens nothing without a capability, and with the session's own only what the data plane gives.
    it.skipIf((probe?.landlock ?? 0) >= 8)(
      "can connect to the MCP socket: an unknown capability gets unauthorized, its own opens its own session only",
      async () => {
        const socket = path.join(stateDir, "mcp.sock");
        const hello = (bearer: string) =>
          `const s=require("net").connect(${JSON.stringify(socket)});s.on("connect",()=>s.write(JSON.stringify({"urlbridge/hello":{v:1,bearer:${JSON.stringify(bearer)}}})+"\\n"));s.on("data",(d)=>{process.stdout.write(String(d));process.exit(0)});s.on("error",(e)=>{console.log(e.code);process.exit(3)})`;
        fs.writeFileSync(path.join(projectDir, "hello-unknown.js"), hello("Zz9Zz9Zz"));
        const unknown = await x(m, `${process.execPath} hello-unknown.js`);
        expect(unknown.stdout).toBe('{"urlbridge/unauthorized":{}}\n');
        fs.writeFileSync(path.join(projectDir, "hello-own.js"), hello(r.split("/").pop()!));
        const own = await x(m, `${process.execPath} hello-own.js`);
        expect(own.stdout).toBe('{"urlbridge/ready":{"v":1}}\n');
      },
    );
  },
);
