// Issue 28, build 2, in the Docker appliance: a terminal-enabled session fills its scratch tmpfs, then starts
// MEMORY_HOGS processes of 60 MB each. The bridge process survives (same pid, container never restarted), another
// session's reads are served during and after, and the agent's processes are the ones ended: by the per-session
// memory budget's watchdog, with a clear answer (URLBRIDGE_AGENT_MEMORY_MB set), or, with the budget off, by the
// kernel's OOM killer, which picks agents (oom_score_adj 1000) before the bridge (0, compose.yaml's default: this
// machine's nested engine refuses a negative value, as rootless ones do).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { getContainerRuntimeClient, Wait, type StartedTestContainer } from "testcontainers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeUrlText } from "../../server/url-grammar/encode.js";
import { buildBridgeImage, BRIDGE_IMAGE, CONTROL_PORT, DATA_PORT, LoopbackContainer } from "./support/containers.js";

const MIB = 1024 * 1024;
/** The container's memory limit: small, so the attack is quick; the scratch tmpfs counts toward it. */
const CONTAINER_MEMORY = 1200 * MIB;
const SCRATCH_MB = 512;
const MEMORY_HOGS = 26;
const MAX_POLLS = 120;

type Body = Record<string, unknown> & { ok: boolean };

/** The appliance as compose.yaml runs it (read-only, six capabilities, tmpfs scratch), with a small memory limit. */
class ApplianceContainer extends LoopbackContainer {
  protected override async beforeContainerCreated(): Promise<void> {
    await super.beforeContainerCreated();
    Object.assign(this.hostConfig, {
      ReadonlyRootfs: true,
      CapDrop: ["ALL"],
      CapAdd: ["CHOWN", "DAC_OVERRIDE", "FOWNER", "SETUID", "SETGID", "KILL"],
      SecurityOpt: ["no-new-privileges:true"],
      Tmpfs: { "/tmp": "size=64m,mode=1777", "/var/lib/urlbridge-scratch": `size=${SCRATCH_MB}m,mode=0755,exec` },
      Memory: CONTAINER_MEMORY,
      MemorySwap: CONTAINER_MEMORY,
      PidsLimit: 1024,
      RestartPolicy: { Name: "unless-stopped" },
    });
  }
}

/** Fills the scratch tmpfs, then starts the hogs a little apart and reports how each ended. */
const ATTACK = [
  `dd if=/dev/zero of="$TMPDIR/fill" bs=1M count=${SCRATCH_MB - 16} 2>/dev/null; echo filled=$?`,
  "pids=''",
  `for i in $(seq 1 ${MEMORY_HOGS}); do node -e 'const b = Buffer.alloc(60 * 2 ** 20, 1); setTimeout(() => b, 20000)' & pids="$pids $!"; sleep 0.2; done`,
  'for p in $pids; do wait $p; echo "exit=$?"; done',
].join("\n");

interface Appliance {
  container: StartedTestContainer;
  projectsDir: string;
  bridgePid: string;
  attacker: { m: string; r: string };
  neighbour: { m: string; r: string };
}

async function exec(container: StartedTestContainer, command: string): Promise<string> {
  const result = await container.exec(["sh", "-c", command]);
  if (result.exitCode !== 0) throw new Error(`${command} exited ${result.exitCode}: ${result.stderr}`);
  return result.stdout;
}

async function startAppliance(environment: Record<string, string>): Promise<Appliance> {
  await buildBridgeImage();
  const projectsDir = fs.mkdtempSync(path.join(os.tmpdir(), "urlbridge-e2e-memory-"));
  fs.chmodSync(projectsDir, 0o755);
  for (const name of ["attacker", "neighbour"]) {
    fs.mkdirSync(path.join(projectsDir, name));
    fs.writeFileSync(path.join(projectsDir, name, "hello.txt"), `hello from ${name}\n`);
    for (const p of [name, `${name}/hello.txt`]) fs.chownSync(path.join(projectsDir, p), 1000, 1000);
  }
  const container = await new ApplianceContainer(BRIDGE_IMAGE)
    .withExposedPorts(CONTROL_PORT, DATA_PORT)
    .withBindMounts([{ source: projectsDir, target: "/projects" }])
    .withEnvironment(environment)
    .withWaitStrategy(Wait.forHealthCheck())
    .withStartupTimeout(120_000)
    .start();
  const token = (await exec(container, "urlbridge token --show")).trim();
  const control = `http://127.0.0.1:${container.getMappedPort(CONTROL_PORT)}`;
  const api = async <T>(route: string, body: unknown) =>
    (await (
      await fetch(`${control}${route}`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      })
    ).json()) as T;
  const sessions: Array<{ m: string; r: string }> = [];
  for (const name of ["attacker", "neighbour"]) {
    const project = await api<{ id: string }>("/api/projects", {
      name,
      root: `/projects/${name}`,
      permissions: { write: false, terminal: true },
    });
    const session = await api<{ initUrl: string }>("/api/sessions", { projectId: project.id });
    const init = (await (await fetch(fromHost(container, session.initUrl))).json()) as {
      bases: { m: string; r: string };
    };
    sessions.push({ m: fromHost(container, init.bases.m), r: fromHost(container, init.bases.r) });
  }
  const bridgePid = (
    await exec(
      container,
      `for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline | grep -q '^node [^ ]*dist/server/main.js' && echo \${p#/proc/}; done`,
    )
  )
    .trim()
    .split("\n")[0]!;
  return { container, projectsDir, bridgePid, attacker: sessions[0]!, neighbour: sessions[1]! };
}

/** Init URLs name the container's data plane; the test reaches it through the published port. */
function fromHost(container: StartedTestContainer, url: string): string {
  return url.replace(/^http:\/\/[^/]+/, `http://127.0.0.1:${container.getMappedPort(DATA_PORT)}`);
}

async function x(base: string, command: string): Promise<Body> {
  let body = (await (await fetch(`${base}/x?raw=${encodeUrlText(command)}`)).json()) as Body;
  for (let i = 0; i < MAX_POLLS && (body.state === "pending" || body.state === "running"); i++) {
    // The poll URL names the container's own data plane; the test reaches it at base's origin.
    const poll = String(body.poll).replace(/^http:\/\/[^/]+/, new URL(base).origin);
    body = (await (await fetch(poll)).json()) as Body;
  }
  return body;
}

/** Reads the neighbour's file over and over until `done` settles; returns every answer's ok and text. */
async function readWhile(base: string, done: Promise<unknown>): Promise<Array<{ ok: boolean; text: string }>> {
  let finished = false;
  void done.finally(() => (finished = true));
  const answers: Array<{ ok: boolean; text: string }> = [];
  while (!finished) {
    try {
      const body = (await (await fetch(`${base}/r?path=hello.txt`)).json()) as Body;
      answers.push({ ok: body.ok, text: String(body.content ?? body.text ?? JSON.stringify(body)) });
    } catch (error) {
      answers.push({ ok: false, text: String(error) });
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return answers;
}

async function restartCount(container: StartedTestContainer): Promise<number> {
  const client = await getContainerRuntimeClient();
  const info = await client.container.inspect(client.container.getById(container.getId()));
  return info.RestartCount;
}

async function expectBridgeUnharmed(appliance: Appliance): Promise<void> {
  expect(await restartCount(appliance.container)).toBe(0);
  const pid = (await exec(appliance.container, `cat /proc/${appliance.bridgePid}/cmdline | tr '\\0' ' '`)).trim();
  expect(pid).toMatch(/^node \S*dist\/server\/main\.js/);
  const health = await fetch(`http://127.0.0.1:${appliance.container.getMappedPort(CONTROL_PORT)}/api/health`);
  expect(health.status).toBe(200);
  // Nothing of the attack is left: every hog was ended ("Buffer[.]alloc" matches them, not this scan).
  const left = await exec(
    appliance.container,
    `for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null | grep -q 'Buffer[.]alloc' && echo \${p#/proc/}; done; true`,
  );
  expect(left.trim()).toBe("");
}

describe.each([
  { budget: "768", ends: "the memory budget's watchdog" },
  { budget: "0", ends: "the kernel's OOM killer" },
])("the memory attack with URLBRIDGE_AGENT_MEMORY_MB=$budget", ({ budget, ends }) => {
  let appliance: Appliance;

  beforeAll(async () => {
    appliance = await startAppliance({ URLBRIDGE_AGENT_MEMORY_MB: budget });
  });
  afterAll(async () => {
    await appliance?.container.stop({ timeout: 5_000 }).catch(() => undefined);
    if (appliance?.projectsDir) fs.rmSync(appliance.projectsDir, { recursive: true, force: true });
  });

  it(`is ended by ${ends}; the bridge survives and keeps serving the other session`, async () => {
    const health = (await (
      await fetch(`http://127.0.0.1:${appliance.container.getMappedPort(CONTROL_PORT)}/api/health`)
    ).json()) as { agentLimits: { oom: Record<string, unknown>; memory: Record<string, unknown> } };
    expect(health.agentLimits.oom).toMatchObject({ agents: 1000, bridge: 0 });
    expect(health.agentLimits.memory).toMatchObject({
      budgetBytes: Number(budget) * MIB,
      enforcement: budget === "0" ? "off" : "watchdog",
      scratchCounted: true,
    });
    expect(await exec(appliance.container, `cat /proc/${appliance.bridgePid}/oom_score_adj`)).toBe("0\n");

    const attack = x(appliance.attacker.m, ATTACK);
    const during = await readWhile(appliance.neighbour.r, attack);
    const body = await attack;
    expect(String(body.stdout)).toContain("filled=0");
    if (budget === "0") {
      // The kernel ended hogs (SIGKILL: 137), never the bridge.
      expect(body, JSON.stringify(body).slice(0, 2000)).toMatchObject({ ok: true });
      expect(String(body.stdout)).toMatch(/exit=137/);
    } else {
      expect(body, JSON.stringify(body).slice(0, 2000)).toMatchObject({
        ok: false,
        errorCode: "memory_budget_exceeded",
        errorDetail: { started: true, budgetBytes: 768 * MIB },
      });
      const detail = body.errorDetail as { processBytes: number; scratchBytes: number };
      expect(detail.scratchBytes).toBeGreaterThan((SCRATCH_MB - 32) * MIB);
      expect(String(body.repairHint)).toContain("URLBRIDGE_AGENT_MEMORY_MB");
    }
    expect(during.length).toBeGreaterThan(0);
    expect(during.filter((a) => !a.ok)).toEqual([]);
    await expectBridgeUnharmed(appliance);
    expect(await x(appliance.attacker.m, 'rm -f "$TMPDIR/fill"; echo freed')).toMatchObject({
      ok: true,
      stdout: "freed\n",
    });
    const after = (await (await fetch(`${appliance.neighbour.r}/r?path=hello.txt`)).json()) as Body;
    expect(after.ok).toBe(true);
  });
});
