// The sandbox-container mode's building block against the real Docker engine: one warm container per project,
// created on the first command, with the project's root as its only project mount, no network, the agent's
// identity, limits, and an exec that reports exit codes, honours cwd/env/timeouts and ends what it started.
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import Dockerode from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createProjectContainers,
  type ContainerExecRequest,
  type ProjectContainers,
} from "../../server/sandbox/container/manager.js";
import { LABEL_INSTANCE, LABEL_PROJECT, LABEL_ROLE, SANDBOX_ROLE } from "../../server/sandbox/container/spec.js";

const AGENT = { uid: 1000, gid: 1000 };
const INSTANCE = `e2e-${process.pid}`;
const STANDIN_IMAGE = "node:20-bookworm-slim";

const docker = new Dockerode();
let base: string;
let containers: ProjectContainers;

function makeProject(name: string, owner = AGENT): string {
  const root = path.join(base, name);
  fs.mkdirSync(root);
  fs.chownSync(root, owner.uid, owner.gid);
  return root;
}

async function run(request: Omit<ContainerExecRequest, "timeoutMs"> & { timeoutMs?: number }, manager = containers) {
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  const result = await manager.exec({
    timeoutMs: 20_000,
    ...request,
    onStdout: (chunk) => stdout.push(chunk),
    onStderr: (chunk) => stderr.push(chunk),
  });
  return { ...result, stdout: Buffer.concat(stdout).toString(), stderr: Buffer.concat(stderr).toString() };
}

async function listed(projectId: string, instance = INSTANCE) {
  return docker.listContainers({
    all: true,
    filters: { label: [`${LABEL_INSTANCE}=${instance}`, `${LABEL_PROJECT}=${projectId}`] },
  });
}

/** Command lines of every process in the project's container. */
async function processes(projectId: string, root: string): Promise<string[]> {
  const { stdout } = await run({
    projectId,
    root,
    command: "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null; echo; done",
  });
  return stdout.split("\n").filter(Boolean);
}

beforeAll(async () => {
  await docker.ping();
  base = fs.mkdtempSync(path.join(os.tmpdir(), "urlbridge-sandbox-e2e-"));
  containers = createProjectContainers({
    instance: INSTANCE,
    image: STANDIN_IMAGE,
    agentFallback: AGENT,
    killAfterMs: 1_000,
  });
});

afterAll(async () => {
  await containers?.removeAll();
  for (const info of await docker.listContainers({
    all: true,
    filters: { label: [`${LABEL_INSTANCE}=${INSTANCE}`] },
  })) {
    await docker.getContainer(info.Id).remove({ force: true });
  }
  if (base) fs.rmSync(base, { recursive: true, force: true });
});

describe("the project's container", () => {
  it("is created on the first command, then reused", async () => {
    const root = makeProject("lazy");
    expect(await listed("lazy")).toHaveLength(0);
    const first = await run({ projectId: "lazy", root, command: "echo hello" });
    expect(first).toMatchObject({ exitCode: 0, stdout: "hello\n", stderr: "", timedOut: false, signal: null });
    const [info] = await listed("lazy");
    expect(info?.Labels).toMatchObject({
      [LABEL_ROLE]: SANDBOX_ROLE,
      [LABEL_PROJECT]: "lazy",
      [LABEL_INSTANCE]: INSTANCE,
    });
    await run({ projectId: "lazy", root, command: "true" });
    expect((await listed("lazy")).map((c) => c.Id)).toEqual([info!.Id]);
    expect(await containers.ensure("lazy", root)).toBe(info!.Id);
  });

  it("is created once when the first commands arrive together", async () => {
    const root = makeProject("together");
    const results = await Promise.all([1, 2, 3].map((n) => run({ projectId: "together", root, command: `echo ${n}` })));
    expect(results.map((r) => r.stdout)).toEqual(["1\n", "2\n", "3\n"]);
    expect(await listed("together")).toHaveLength(1);
  });

  it("is confined: one project mount, the agent's identity, no capabilities, no privilege gain, limits, no network", async () => {
    const root = makeProject("shape");
    const id = await containers.ensure("shape", root);
    const info = await docker.getContainer(id).inspect();
    expect(info.Config.User).toBe("1000:1000");
    expect(info.HostConfig).toMatchObject({
      NetworkMode: "none",
      Init: true,
      CapDrop: ["ALL"],
      SecurityOpt: ["no-new-privileges"],
      ReadonlyRootfs: true,
      Privileged: false,
      PidsLimit: 512,
      Memory: 1024 ** 3,
      NanoCpus: 1e9,
    });
    expect(info.Mounts.filter((m) => m.Type === "bind")).toEqual([
      expect.objectContaining({ Source: root, Destination: "/project", RW: true }),
    ]);
    expect(info.Mounts.some((m) => m.Source.includes("docker.sock"))).toBe(false);
  });

  it("runs in /project, or in cwd relative to it, and reports stdout, stderr and the exit code apart", async () => {
    const root = makeProject("cwd");
    fs.mkdirSync(path.join(root, "src", "lib"), { recursive: true });
    fs.chownSync(path.join(root, "src"), AGENT.uid, AGENT.gid);
    expect(await run({ projectId: "cwd", root, command: "pwd" })).toMatchObject({ stdout: "/project\n", exitCode: 0 });
    expect(await run({ projectId: "cwd", root, cwd: "src/lib", command: "pwd" })).toMatchObject({
      stdout: "/project/src/lib\n",
    });
    expect(await run({ projectId: "cwd", root, command: "printf out; printf err >&2; exit 7" })).toMatchObject({
      stdout: "out",
      stderr: "err",
      exitCode: 7,
      timedOut: false,
    });
  });

  it.each([
    ["../elsewhere", "path_outside_root"],
    ["/etc", "path_outside_root"],
    ["missing", "path_not_found"],
  ])("refuses cwd %s with %s before anything runs", async (cwd, errorCode) => {
    const root = makeProject(`badcwd-${errorCode}-${cwd.length}`);
    await expect(
      containers.exec({ projectId: "badcwd", root, cwd, command: "true", timeoutMs: 5_000 }),
    ).rejects.toMatchObject({ code: errorCode });
  });

  it("passes the given environment and nothing of the bridge's", async () => {
    const root = makeProject("env");
    process.env.URLBRIDGE_SANDBOX_TEST_SECRET = "must-not-leak";
    try {
      const result = await run({
        projectId: "env",
        root,
        env: { GREETING: "hi there" },
        command: 'echo "$GREETING"; env',
      });
      expect(result.stdout.split("\n")[0]).toBe("hi there");
      expect(result.stdout).not.toContain("URLBRIDGE_SANDBOX_TEST_SECRET");
      expect(result.stdout).toMatch(/^HOME=\/tmp$/m);
    } finally {
      delete process.env.URLBRIDGE_SANDBOX_TEST_SECRET;
    }
  });

  it("creates files that belong on the host to the agent's uid, never root", async () => {
    const root = makeProject("owner");
    const result = await run({ projectId: "owner", root, command: "id -u; mkdir made && echo x > made/file.txt" });
    expect(result).toMatchObject({ exitCode: 0, stdout: "1000\n" });
    for (const made of ["made", "made/file.txt"]) {
      expect(fs.statSync(path.join(root, made))).toMatchObject({ uid: AGENT.uid, gid: AGENT.gid });
    }
  });

  it("runs a root-owned project as the fallback identity, which cannot write there", async () => {
    const root = makeProject("rootowned", { uid: 0, gid: 0 });
    const result = await run({ projectId: "rootowned", root, command: "id -u; touch here" });
    expect(result.stdout).toBe("1000\n");
    expect(result.exitCode).not.toBe(0);
    expect(fs.existsSync(path.join(root, "here"))).toBe(false);
  });

  it("sees no other project and no host path", async () => {
    const a = makeProject("seer");
    const b = makeProject("secret");
    fs.writeFileSync(path.join(b, "secret.txt"), "project B only");
    fs.writeFileSync(path.join(a, "mine.txt"), "project A");
    await run({ projectId: "secret", root: b, command: "true" });
    const result = await run({
      projectId: "seer",
      root: a,
      command: `cat /project/mine.txt; echo; test -e ${b} && echo B-visible; test -e ${base} && echo base-visible; grep -c ' /project ' /proc/self/mountinfo; grep -F -c '${b}' /proc/self/mountinfo; ls /var/run/docker.sock 2>&1`,
    });
    expect(result.stdout.split("\n").slice(0, 3)).toEqual(["project A", "1", "0"]);
    expect(result.stdout).not.toContain("visible");
    expect(result.stdout).toContain("No such file");
  });

  it("has no network: the host is unreachable, while an allowed network reaches it", async () => {
    // The host's address on Docker's default bridge (docker0; Node lists no interface that is down, so ask the engine).
    const ipam = (
      (await docker.getNetwork("bridge").inspect()) as {
        IPAM: { Config: Array<{ Subnet?: string; Gateway?: string }> };
      }
    ).IPAM.Config[0]!;
    const gateway = ipam.Gateway ?? ipam.Subnet!.replace(/\.0\/\d+$/, ".1");
    const server = net.createServer((socket) => socket.end("hello from the host\n"));
    await new Promise<void>((resolve) => server.listen(0, gateway, resolve));
    const port = (server.address() as net.AddressInfo).port;
    const connect = `node -e "require('net').connect(${port}, '${gateway}').on('data', d => process.stdout.write(d)).on('error', e => { console.log(e.code); process.exit(3) })"`;
    const networked = createProjectContainers({
      instance: INSTANCE,
      image: STANDIN_IMAGE,
      agentFallback: AGENT,
      network: "bridge",
    });
    try {
      const root = makeProject("offline");
      const offline = await run({ projectId: "offline", root, command: `ls /sys/class/net; ${connect}` });
      expect(offline.stdout).toBe("lo\nENETUNREACH\n");
      expect(offline.exitCode).toBe(3);
      const online = await run({ projectId: "online", root: makeProject("online"), command: connect }, networked);
      expect(online).toMatchObject({ exitCode: 0, stdout: "hello from the host\n" });
    } finally {
      await networked.remove("online");
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("is replaced when its settings change (another image)", async () => {
    const root = makeProject("reimage");
    const before = await containers.ensure("reimage", root);
    const debian = createProjectContainers({ instance: INSTANCE, image: "debian:bookworm-slim", agentFallback: AGENT });
    const result = await run(
      { projectId: "reimage", root, command: "cat /etc/debian_version >/dev/null && ! command -v node" },
      debian,
    );
    expect(result.exitCode).toBe(0);
    const after = await listed("reimage");
    expect(after.map((c) => c.Image)).toEqual(["debian:bookworm-slim"]);
    expect(after[0]!.Id).not.toBe(before);
  });
});

describe("timeouts and process lifecycle", () => {
  it("a timeout ends the command (SIGTERM, then SIGKILL for one that ignores it) and leaves nothing running", async () => {
    const root = makeProject("timeout");
    const polite = await run({ projectId: "timeout", root, command: "echo started; sleep 111", timeoutMs: 1_000 });
    expect(polite).toMatchObject({ timedOut: true, exitCode: 124, signal: "SIGTERM", stdout: "started\n" });
    const stubborn = await run({ projectId: "timeout", root, command: "trap '' TERM; sleep 112", timeoutMs: 1_000 });
    expect(stubborn).toMatchObject({ timedOut: true, exitCode: 137, signal: "SIGKILL" });
    const left = await processes("timeout", root);
    expect(left.some((p) => p.includes("sleep 111") || p.includes("sleep 112"))).toBe(false);
  });

  it("a command that exits early is not timed out even if its own exit code is 124", async () => {
    const root = makeProject("exit124");
    expect(await run({ projectId: "exit124", root, command: "exit 124", timeoutMs: 10_000 })).toMatchObject({
      exitCode: 124,
      timedOut: false,
      signal: null,
    });
  });

  it("finishes when the command exits although a process it left behind holds the output; ending the project's processes ends that one", async () => {
    const root = makeProject("held");
    const result = await run({
      projectId: "held",
      root,
      command: "setsid -f sleep 313; sleep 314 & echo done",
      timeoutMs: 60_000,
    });
    expect(result).toMatchObject({ exitCode: 0, stdout: "done\n", timedOut: false, outputHeld: true });
    const id = await containers.ensure("held", root);
    expect((await processes("held", root)).filter((p) => /sleep 31[34]/.test(p))).toHaveLength(2);
    expect(await containers.endProcesses("held")).toBe(true);
    expect((await processes("held", root)).filter((p) => /sleep 31[34]/.test(p))).toHaveLength(0);
    expect(await containers.ensure("held", root)).toBe(id);
  });

  it("an abort ends the running command", async () => {
    const root = makeProject("abort");
    const controller = new AbortController();
    const pending = run({
      projectId: "abort",
      root,
      command: "echo up; sleep 115",
      signal: controller.signal,
      timeoutMs: 60_000,
    });
    setTimeout(() => controller.abort(), 500);
    // Ended through its process group (exit 137), not by restarting the container (exit code null).
    expect(await pending).toMatchObject({ aborted: true, timedOut: false, exitCode: 137 });
    expect((await processes("abort", root)).some((p) => p.includes("sleep 115"))).toBe(false);
  });

  it("a fork bomb stops at the pids limit and the container keeps answering", async () => {
    const root = makeProject("pids");
    const small = createProjectContainers({
      instance: INSTANCE,
      image: STANDIN_IMAGE,
      agentFallback: AGENT,
      limits: { pids: 64 },
    });
    try {
      const bomb = await run(
        {
          projectId: "pids",
          root,
          command: "sh -c 'i=0; while [ $i -lt 200 ]; do sleep 30 & i=$((i+1)); done; echo all-started'",
          timeoutMs: 5_000,
        },
        small,
      );
      expect(bomb.stderr).toContain("Cannot fork");
      expect(bomb.stdout).not.toContain("all-started");
      expect(await small.endProcesses("pids")).toBe(true);
      expect(await run({ projectId: "pids", root, command: "echo alive" }, small)).toMatchObject({
        exitCode: 0,
        stdout: "alive\n",
      });
    } finally {
      await small.remove("pids");
    }
  });
});

describe("removal", () => {
  it("remove() removes the container and its processes; the files stay; the next command makes a new one", async () => {
    const root = makeProject("removed");
    const shared = createProjectContainers({ instance: INSTANCE, image: STANDIN_IMAGE, agentFallback: AGENT });
    await run({ projectId: "removed", root, command: "echo kept > kept.txt; setsid -f sleep 316" }, shared);
    const [before] = await listed("removed");
    expect(await shared.remove("removed")).toBe(true);
    expect(await listed("removed")).toHaveLength(0);
    expect(fs.readFileSync(path.join(root, "kept.txt"), "utf8")).toBe("kept\n");
    expect(await shared.remove("removed")).toBe(false);
    await run({ projectId: "removed", root, command: "true" }, shared);
    const [after] = await listed("removed");
    expect(after?.Id).not.toBe(before?.Id);
    await shared.remove("removed");
  });
});
