// The isolation matrix of issue 10 inside the Docker appliance, run from a terminal-enabled session's /x: the
// state dir, the operator-token file, the bridge's /proc/<pid>/environ and another project's files are closed;
// the control API refuses whatever the command could find; the bridge cannot be signalled; a setsid'd daemon
// does not survive its session's deletion. Each line is asserted, refused or ended.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Wait, type StartedTestContainer } from "testcontainers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeUrlText } from "../../server/url-grammar/encode.js";
import {
  buildBridgeImage,
  BRIDGE_IMAGE,
  CONTROL_PORT,
  DATA_PORT,
  LoopbackContainer,
  stopAll,
} from "./support/containers.js";

const STATE_DIR = "/var/lib/urlbridge";
const MAX_POLLS = 60;

type Body = Record<string, unknown> & { ok: boolean };

/** The appliance as compose.yaml runs it: read-only image, six capabilities, no new privileges, tmpfs scratch. */
class HardenedContainer extends LoopbackContainer {
  protected override async beforeContainerCreated(): Promise<void> {
    await super.beforeContainerCreated();
    Object.assign(this.hostConfig, {
      ReadonlyRootfs: true,
      CapDrop: ["ALL"],
      CapAdd: ["CHOWN", "DAC_OVERRIDE", "FOWNER", "SETUID", "SETGID", "KILL"],
      SecurityOpt: ["no-new-privileges:true"],
      Tmpfs: { "/tmp": "size=64m,mode=1777", "/var/lib/urlbridge-scratch": "size=128m,mode=0755,exec" },
    });
  }
}

let bridge: StartedTestContainer | undefined;
let projectsDir: string;
let operatorToken: string;
let bridgePid: string;
let m: string;
let sessionId: string;

const controlUrl = () => `http://127.0.0.1:${bridge!.getMappedPort(CONTROL_PORT)}`;
/** Init URLs name the container's data plane; the test reaches it through the published port. */
const fromHost = (url: string) =>
  url.replace(/^http:\/\/[^/]+/, `http://127.0.0.1:${bridge!.getMappedPort(DATA_PORT)}`);

async function api<T>(method: string, route: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(`${controlUrl()}${route}`, {
    method,
    headers: { authorization: `Bearer ${operatorToken}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
}

async function execInBridge(command: string): Promise<string> {
  const result = await bridge!.exec(["sh", "-c", command]);
  if (result.exitCode !== 0) throw new Error(`${command} exited ${result.exitCode}: ${result.stderr}`);
  return result.stdout;
}

async function x(command: string, query = ""): Promise<Body> {
  let body = (await (await fetch(fromHost(`${m}/x?${query}raw=${encodeUrlText(command)}`))).json()) as Body;
  for (let i = 0; i < MAX_POLLS && (body.state === "pending" || body.state === "running"); i++) {
    body = (await (await fetch(fromHost(String(body.poll)))).json()) as Body;
  }
  return body;
}

/** Pids in the container whose command line holds `marker`, read by root through /proc. */
async function processesWith(marker: string): Promise<string[]> {
  // "9[1]83.5" matches the marker but not this scan's own command line.
  const pattern = `${marker.slice(0, 1)}[${marker.slice(1, 2)}]${marker.slice(2)}`;
  const out = await execInBridge(
    `for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null | grep -q -- '${pattern}' && echo \${p#/proc/}; done; true`,
  );
  return out.split("\n").filter(Boolean);
}

beforeAll(async () => {
  await buildBridgeImage();
  projectsDir = fs.mkdtempSync(path.join(os.tmpdir(), "urlbridge-e2e-isolation-"));
  fs.chmodSync(projectsDir, 0o755);
  for (const name of ["a", "b"]) {
    fs.mkdirSync(path.join(projectsDir, name));
    fs.chownSync(path.join(projectsDir, name), 1000, 1000);
  }
  fs.writeFileSync(path.join(projectsDir, "b", "secret.txt"), "project b's secret\n");
  bridge = await new HardenedContainer(BRIDGE_IMAGE)
    .withExposedPorts(CONTROL_PORT, DATA_PORT)
    .withBindMounts([{ source: projectsDir, target: "/projects" }])
    .withWaitStrategy(Wait.forHealthCheck())
    .withStartupTimeout(120_000)
    .start();
  operatorToken = (await execInBridge("urlbridge token --show")).trim();
  bridgePid = (
    await execInBridge(
      `for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline | grep -q '^node [^ ]*dist/server/main.js' && echo \${p#/proc/}; done`,
    )
  )
    .trim()
    .split("\n")[0]!;
  expect(Number(bridgePid)).toBeGreaterThan(1);
  for (const name of ["a", "b"]) {
    const project = await api<{ id: string }>("POST", "/api/projects", {
      name,
      root: `/projects/${name}`,
      permissions: { write: true, terminal: true },
    });
    expect(project.status).toBe(201);
    if (name === "a") {
      const session = await api<{ id: string; initUrl: string }>("POST", "/api/sessions", {
        projectId: project.body.id,
      });
      sessionId = session.body.id;
      const init = (await (await fetch(fromHost(session.body.initUrl))).json()) as { bases: { m: string } };
      m = init.bases.m;
    }
  }
});

afterAll(async () => {
  await stopAll([bridge]);
  if (projectsDir) fs.rmSync(projectsDir, { recursive: true, force: true });
});

describe("isolation in the appliance, from a terminal session's /x", () => {
  it("reports the sandbox it enforces in /api/health", async () => {
    const health = (await (await fetch(`${controlUrl()}/api/health`)).json()) as { sandbox: Record<string, unknown> };
    expect(health.sandbox).toMatchObject({
      mode: "landlock",
      filesystem: true,
      procProtection: true,
      signals: true,
      identitySeparation: true,
      perProjectIsolation: true,
    });
  });

  it("runs as the project owner, not as the bridge (root with compose's six capabilities)", async () => {
    expect(await execInBridge(`grep CapEff /proc/${bridgePid}/status`)).toMatch(/CapEff:\s+00000000000000eb\n/);
    expect(await execInBridge(`stat -c %u /proc/${bridgePid}`)).toBe("0\n");
    expect(await x("id -u")).toMatchObject({ ok: true, stdout: "1000\n" });
  });

  it.each([
    ["the state dir", () => `ls ${STATE_DIR}`],
    ["the operator-token file", () => `cat ${STATE_DIR}/operator-token`],
    ["the bridge's environment", () => `tr '\\0' '\\n' < /proc/${bridgePid}/environ`],
    ["the bridge's code", () => `ls /app`],
    ["another project's files", () => `cat /projects/b/secret.txt`],
  ])("cannot read %s", async (_name, command) => {
    const body = await x(command());
    expect(body).toMatchObject({ ok: true });
    expect(body.exitCode).not.toBe(0);
    expect(String(body.stdout)).toBe("");
    expect(String(body.stderr)).toMatch(/Permission denied/);
  });

  it("cannot write into another project", async () => {
    const body = await x("echo planted > /projects/b/planted.txt");
    expect(body.exitCode).not.toBe(0);
    expect(fs.existsSync(path.join(projectsDir, "b", "planted.txt"))).toBe(false);
  });

  it("gets nothing from the control API with anything it can find", async () => {
    // Every place a credential could come from, then a call with each candidate (and none).
    const script = `
      const fs = require("node:fs");
      const found = [];
      for (const f of ["${STATE_DIR}/operator-token", "/proc/${bridgePid}/environ", "/proc/1/environ"]) {
        try { found.push(...fs.readFileSync(f, "utf8").split(/[\\0\\n=]/).filter((s) => s.length >= 16)); } catch (e) { console.error(f, e.code); }
      }
      for (const [k, v] of Object.entries(process.env)) if (k.startsWith("URLBRIDGE_")) found.push(v);
      (async () => {
        const statuses = [];
        for (const token of ["", ...found]) {
          const r = await fetch("http://127.0.0.1:${CONTROL_PORT}/api/projects", { method: "POST", headers: { authorization: "Bearer " + token, "content-type": "application/json" }, body: JSON.stringify({ name: "stolen", root: "${STATE_DIR}", permissions: { write: true, terminal: true } }) });
          statuses.push(r.status);
        }
        console.log(JSON.stringify({ candidates: found.length, statuses }));
      })();`;
    const body = await x(`node -e '${script.replace(/'/g, "'\\''")}'`);
    expect(body).toMatchObject({ ok: true, exitCode: 0 });
    const result = JSON.parse(String(body.stdout)) as { candidates: number; statuses: number[] };
    expect(result.candidates).toBe(0);
    expect(result.statuses.every((s) => s === 401)).toBe(true);
    expect(String(body.stderr)).toMatch(/operator-token EACCES/);
    const projects = await api<Array<{ name: string }>>("GET", "/api/projects");
    expect(projects.body.map((p) => p.name).sort()).toEqual(["a", "b"]);
  });

  it("cannot signal the bridge, which keeps answering", async () => {
    const body = await x(`kill -9 ${bridgePid}; echo kill=$?; kill -9 $PPID; echo ppid=$?`);
    expect(body, JSON.stringify(body)).toMatchObject({ ok: true });
    expect(body.stdout).toBe("kill=1\nppid=1\n");
    expect(String(body.stderr)).toMatch(/Operation not permitted/);
    expect((await fetch(`${controlUrl()}/api/health`)).status).toBe(200);
    expect(await x("echo still-here")).toMatchObject({ ok: true, stdout: "still-here\n" });
  });

  it("a setsid'd daemon does not survive the deletion of its session", async () => {
    const marker = "9183.5";
    const launched = await x(
      `setsid -f sleep ${marker} >/dev/null 2>&1; (sh -c "sleep ${marker} >/dev/null 2>&1 &" &); sleep ${marker}`,
      "bg=1&",
    );
    expect(launched).toMatchObject({ ok: true, processState: "running" });
    await expect
      .poll(async () => (await processesWith(`sleep ${marker}`)).length, { timeout: 5000 })
      .toBeGreaterThanOrEqual(3);
    expect((await api("DELETE", `/api/sessions/${sessionId}`)).status).toBeLessThan(300);
    await expect.poll(async () => (await processesWith(marker)).length, { timeout: 8000, interval: 200 }).toBe(0);
  });
});
