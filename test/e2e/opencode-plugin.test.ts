// compose.yaml's "opencode" profile as an operator runs it (`docker compose --profile opencode up -d`), and an agent
// that delegates a worker to that OpenCode through the bundled opencode-control plugin, over the edge stand-in
// (issue 13, item 6). The images are built (OpenCode's by compose from deploy/opencode), the tunnel service is played
// by the edge stand-in (test/e2e/support/compose.opencode.e2e.yaml), and a fake LLM provider on the compose control
// network's gateway answers OpenCode. What docs/SECURITY.md says the OpenCode container can and cannot reach is
// checked on the running containers.
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { GenericContainer } from "testcontainers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeUrlText } from "../../server/url-grammar/encode.js";
import { REPO_ROOT } from "./support/containers.js";
import { createEdgeClient, type EdgeClient, waitForDiscoveredOrigin } from "./support/edge-client.js";
import { startMockLlm, type MockLlm } from "./support/mock-llm.js";
import { mockProviderConfig } from "../helpers/opencode-process.js";

const run = promisify(execFile);
const PROJECT = `urlbridge-e2e-oc-${process.pid}`;
/**
 * Not compose.yaml's default nor network-isolation.test.ts's range, so neither a real appliance nor that suite
 * collides, and outside Docker's default address pools (see network-isolation.test.ts).
 */
const EDGE_SUBNET = `10.213.${150 + (process.pid % 50)}.0/24`;
const COMPOSE_FILES = ["-f", "compose.yaml", "-f", "test/e2e/support/compose.opencode.e2e.yaml"];
/** The tags compose.opencode.e2e.yaml names (this suite's own, so other suites' images are never replaced). */
const BRIDGE_IMAGE = "urlbridge:e2e-oc";
const EDGE_IMAGE = "urlbridge-edge-standin:e2e-oc";
const OPENCODE_PASSWORD = "e2e-oc-opencode-password-0123456789";
const EDGE_ORIGIN = "https://e2e-edge.trycloudflare.com";
const PLUGIN = "opencode-control";
const READY_TIMEOUT_MS = 60_000;
/** Polls of a running worker; each wait is bounded by the plugin (well under a minute), so this bounds the test. */
const MAX_POLLS = 12;
const AGENT_UID = 1000;
/** Worker states a wait ends on; running, not-admitted and queued answer a poll URL to wait more. */
const FINAL_STATES = ["completed", "failed", "aborted", "blocked"];

interface WorkerView {
  sessionId: string;
  messageId: string;
  state: string;
}
interface WorkerResult {
  assistantMessageId: string;
  finish: string;
  text: string;
}
interface WorkerAnswer {
  ok: boolean;
  state?: string;
  errorCode?: string;
  retryable?: boolean;
  worker?: WorkerView;
  /** Beside the worker once its turn has an answer. */
  result?: WorkerResult;
  waitUrl?: string;
  poll?: string;
}

let projectsDir: string;
let workDir: string;
let env: NodeJS.ProcessEnv;
let llm: MockLlm | undefined;
let controlUrl: string;
let operatorToken: string;
let edgeClient: EdgeClient;
let bases: { r: string; m: string };
let shellBases: { r: string; m: string };

async function compose(args: string[], timeoutMs = 300_000): Promise<string> {
  const { stdout } = await run(
    "docker",
    ["compose", "--env-file", "/dev/null", "-p", PROJECT, "--profile", "opencode", ...COMPOSE_FILES, ...args],
    {
      cwd: REPO_ROOT,
      env,
      timeout: timeoutMs,
      maxBuffer: 16 * 1024 * 1024,
    },
  );
  return stdout;
}

async function execIn(service: string, command: string[]): Promise<{ code: number; out: string }> {
  try {
    return { code: 0, out: await compose(["exec", "-T", service, ...command], 60_000) };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === "number" ? e.code : 1, out: `${e.stdout ?? ""}${e.stderr ?? ""}` };
  }
}

async function api<T>(route: string): Promise<T> {
  const res = await fetch(`${controlUrl}${route}`, {
    headers: { authorization: `Bearer ${operatorToken}` },
    signal: AbortSignal.timeout(10_000),
  });
  if (res.status !== 200) throw new Error(`GET ${route} answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as T;
}

/** Init URLs carry the tunnel origin once the bridge has discovered it. */
const discovered = () =>
  waitForDiscoveredOrigin(async () => (await api<{ origin: string }>("/api/tunnel")).origin, EDGE_ORIGIN);

/**
 * Compose reports OpenCode healthy once it answers its own health route; its first project-scoped answer can take
 * longer than the plugin's 1.5 s probe on a loaded machine, and the plugin then says not-running. Give it a
 * bounded while, as an operator refreshing the Plugins page would.
 */
async function waitForPluginReady(): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last: unknown;
  while (Date.now() < deadline) {
    const plugins = await api<Array<{ id: string; status: { state: string } }>>("/api/plugins");
    last = plugins.find((p) => p.id === PLUGIN)?.status;
    if ((last as { state?: string } | undefined)?.state === "ready") return;
    await new Promise((r) => setTimeout(r, 1_000));
  }
  throw new Error(`the plugin was not ready within ${READY_TIMEOUT_MS} ms: ${JSON.stringify(last)}`);
}

async function openSession(project: string, flags: string[]): Promise<{ r: string; m: string }> {
  const added = await execIn("bridge", [
    "urlbridge",
    "project",
    "add",
    project,
    `/projects/${project}`,
    ...flags,
    "--json",
  ]);
  if (added.code !== 0) throw new Error(`project add ${project}: ${added.out}`);
  const created = await execIn("bridge", ["urlbridge", "session", "create", project, "--json"]);
  if (created.code !== 0) throw new Error(`session create ${project}: ${created.out}`);
  const { initUrl } = JSON.parse(created.out) as { initUrl: string };
  const init = await edgeClient.get<{ bases: { r: string; m: string } }>(initUrl);
  expect(init.status).toBe(200);
  return init.body.bases;
}

/** A plugin call as an agent makes it: one GET through the edge, the arguments as the raw tail. */
async function k<T>(base: string, tool: string, args: Record<string, unknown>, query = ""): Promise<T> {
  const res = await edgeClient.get<T>(
    `${base}/k?plugin=${PLUGIN}&tool=${tool}${query}&raw=${encodeUrlText(JSON.stringify(args))}`,
  );
  expect(res.status).toBe(200);
  return res.body;
}

/** Starts a worker and follows the URLs the plugin answers until it is no longer running (bounded). */
async function runWorker(prompt: string): Promise<WorkerView & { result?: WorkerResult }> {
  let started = await k<WorkerAnswer>(bases.m, "opencode_worker", { action: "start", prompt }, "&wait=1500");
  // The intent may outlast the URL's wait (admission reads OpenCode back): the journal's poll URL settles it.
  for (let polls = 0; polls < MAX_POLLS && (started.state === "pending" || started.state === "running"); polls++) {
    started = (await edgeClient.get<WorkerAnswer>(String(started.poll))).body;
  }
  expect(started, JSON.stringify(started)).toMatchObject({
    ok: true,
    worker: { sessionId: expect.stringMatching(/^ses_/), messageId: expect.stringMatching(/^msg_/) },
  });
  let answer: WorkerAnswer = started;
  let next = started.waitUrl;
  for (let polls = 0; polls < MAX_POLLS && next && !FINAL_STATES.includes(answer.worker?.state ?? ""); polls++) {
    const res = await edgeClient.get<WorkerAnswer>(next);
    expect(res.status).toBe(200);
    // A read that says wait_and_retry (OpenCode slow to answer its identification on a loaded machine) is fetched
    // again, as an agent would; reads are safe to repeat.
    if (!res.body.ok && res.body.retryable) {
      await new Promise((r) => setTimeout(r, 1_000));
      continue;
    }
    answer = res.body;
    expect(answer.ok, JSON.stringify(answer)).toBe(true);
    if (FINAL_STATES.includes(answer.worker?.state ?? "")) break;
    next = answer.poll;
  }
  expect(answer.worker!.sessionId).toBe(started.worker!.sessionId);
  expect(answer.worker!.messageId).toBe(started.worker!.messageId);
  return { ...answer.worker!, ...(answer.result ? { result: answer.result } : {}) };
}

/** Runs `node -e script` in a throwaway container on one of the compose project's networks; returns its last line. */
async function probeFrom(network: string, script: string): Promise<string> {
  const { stdout } = await run(
    "docker",
    ["run", "--rm", "--network", `${PROJECT}_${network}`, "--entrypoint", "node", BRIDGE_IMAGE, "-e", script],
    { timeout: 60_000 },
  );
  return stdout.trim().split("\n").pop()!;
}

const fetchStatus = (url: string, headers: Record<string, string> = {}) =>
  `fetch(${JSON.stringify(url)}, { headers: ${JSON.stringify(headers)}, signal: AbortSignal.timeout(5000) }).then((r) => console.log(r.status), (e) => console.log((e.cause && e.cause.code) || e.name))`;

beforeAll(async () => {
  await GenericContainer.fromDockerfile(REPO_ROOT).build(BRIDGE_IMAGE, { deleteOnExit: false });
  await GenericContainer.fromDockerfile(path.join(REPO_ROOT, "test", "e2e", "edge-standin")).build(EDGE_IMAGE, {
    deleteOnExit: false,
  });

  workDir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "urlbridge-e2e-oc-")));
  projectsDir = path.join(workDir, "projects");
  for (const project of ["demo", "shell"]) {
    fs.mkdirSync(path.join(projectsDir, project), { recursive: true });
    fs.chownSync(path.join(projectsDir, project), AGENT_UID, AGENT_UID);
  }
  fs.chmodSync(workDir, 0o755);
  fs.chmodSync(projectsDir, 0o755);
  fs.writeFileSync(path.join(projectsDir, "demo", "README.md"), "# demo\n");
  fs.chownSync(path.join(projectsDir, "demo", "README.md"), AGENT_UID, AGENT_UID);
  const configFile = path.join(workDir, "opencode.json");

  const clean = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) =>
        !k.startsWith("URLBRIDGE_") &&
        !k.startsWith("TUNNEL_") &&
        !k.startsWith("COMPOSE_") &&
        !k.startsWith("OPENCODE_"),
    ),
  );
  env = {
    ...clean,
    URLBRIDGE_PROJECTS: projectsDir,
    URLBRIDGE_EDGE_SUBNET: EDGE_SUBNET,
    URLBRIDGE_OPENCODE_PASSWORD: OPENCODE_PASSWORD,
    URLBRIDGE_OPENCODE_CONFIG: configFile,
    OPENCODE_PROVIDER_API_KEY: "mock-key-from-the-operator",
  };
  // The profile's own build of the OpenCode image (deploy/opencode/Dockerfile), as `up --build` would run it.
  await compose(["build", "opencode"], 900_000);

  // The bridge and the tunnel first: the fake provider listens on the control network's gateway, which exists only
  // once compose made the network; the operator's config names it. Then the operator's command brings up the rest.
  await compose(["up", "-d", "--no-build", "--wait", "bridge", "tunnel"]);
  const gateway = JSON.parse(
    (await run("docker", ["network", "inspect", `${PROJECT}_control`, "--format", "{{json .IPAM.Config}}"])).stdout,
  ) as Array<{ Gateway: string }>;
  llm = await startMockLlm({ host: gateway[0]!.Gateway });
  fs.writeFileSync(configFile, JSON.stringify(mockProviderConfig(llm.baseURL, "{env:OPENCODE_PROVIDER_API_KEY}")));
  fs.chmodSync(configFile, 0o644);
  await compose(["up", "-d", "--no-build", "--wait"]);

  controlUrl = `http://${(await compose(["port", "bridge", "47433"])).trim()}`;
  operatorToken = (await execIn("bridge", ["urlbridge", "token", "--show"])).out.trim();
  const edgePort = Number((await compose(["port", "tunnel", "8443"])).trim().split(":").pop());
  const ca = (await execIn("tunnel", ["cat", "/etc/edge/edge.crt"])).out;
  edgeClient = createEdgeClient({ origin: EDGE_ORIGIN, port: edgePort, ca });
  await discovered();
  bases = await openSession("demo", ["--write"]);
  shellBases = await openSession("shell", ["--terminal"]);
  await waitForPluginReady();
});

afterAll(async () => {
  if (env) await compose(["down", "-v", "--timeout", "5"]).catch(() => undefined);
  await llm?.close();
  if (workDir) fs.rmSync(workDir, { recursive: true, force: true });
});

describe("compose.yaml --profile opencode", () => {
  it("runs OpenCode healthy in the bridge's network namespace, listening on loopback only", async () => {
    const ids = Object.fromEntries(
      await Promise.all(["bridge", "opencode"].map(async (s) => [s, (await compose(["ps", "-q", s])).trim()] as const)),
    );
    const { stdout } = await run("docker", [
      "inspect",
      "--format",
      "{{json .HostConfig.NetworkMode}} {{json .State.Health.Status}}",
      ids.opencode!,
    ]);
    const [mode, health] = stdout
      .trim()
      .split(" ")
      .map((v) => JSON.parse(v) as string);
    expect(mode).toBe(`container:${ids.bridge}`);
    expect(health).toBe("healthy");
    // On the shared loopback it answers, and only with its password; on the bridge's control address nothing listens.
    expect(
      (await execIn("bridge", ["node", "-e", fetchStatus("http://127.0.0.1:4096/global/health")])).out.trim(),
    ).toBe("401");
    const basic = { authorization: `Basic ${Buffer.from(`opencode:${OPENCODE_PASSWORD}`).toString("base64")}` };
    expect(
      (await execIn("bridge", ["node", "-e", fetchStatus("http://127.0.0.1:4096/global/health", basic)])).out.trim(),
    ).toBe("200");
    expect(await probeFrom("control", fetchStatus("http://bridge-control:4096/global/health", basic))).toBe(
      "ECONNREFUSED",
    );
  });

  it("shows the plugin ready in /api/plugins: four tools, the loopback URL, Basic auth with the password configured", async () => {
    const plugins =
      await api<
        Array<{ id: string; toolCount: number; status: { state: string; connection?: Record<string, unknown> } }>
      >("/api/plugins");
    const plugin = plugins.find((p) => p.id === PLUGIN);
    expect(plugin, JSON.stringify(plugins)).toMatchObject({
      toolCount: 4,
      status: {
        state: "ready",
        connection: { url: "http://127.0.0.1:4096", auth: "basic", credentials: "configured", version: "1.18.33" },
      },
    });
  });

  it("answers the agent's status call through the edge", async () => {
    const status = await k<{ ok: boolean; state: string }>(bases.r, "opencode_info", { action: "status" });
    expect(status).toMatchObject({ ok: true, state: "ready" });
  });

  it("runs a worker through /k over the edge: started, waited on, its result read with exact identity", async () => {
    const before = llm!.requests.length;
    const worker = await runWorker("Say hello from the compose profile");
    expect(worker.state, JSON.stringify(worker)).toBe("completed");
    expect(worker.result).toMatchObject({ finish: "stop", assistantMessageId: expect.stringMatching(/^msg_/) });
    expect(worker.result!.text).toContain("MOCK-REPLY to: Say hello from the compose profile");
    // The fake provider was asked, from inside the OpenCode container, with the tools the project's permissions allow:
    // file edits (write), never a shell (no terminal permission) nor nested subagents.
    const asked = llm!.requests.slice(before);
    expect(asked.length).toBeGreaterThanOrEqual(1);
    expect(asked[0]!.tools).toEqual(expect.arrayContaining(["read", "edit", "write"]));
    expect(asked[0]!.tools).not.toContain("bash");
    expect(asked[0]!.tools).not.toContain("task");
  });

  it("lets the worker write into the project the bridge sees, as the project owner", async () => {
    const file = "/projects/demo/from-worker.txt";
    const worker = await runWorker(
      `TOOLCALL:write ${JSON.stringify({ filePath: file, content: "written by an OpenCode worker\n" })}`,
    );
    expect(worker.state, JSON.stringify(worker)).toBe("completed");
    expect(worker.result!.text).toContain("MOCK-DONE");
    const onHost = path.join(projectsDir, "demo", "from-worker.txt");
    expect(fs.readFileSync(onHost, "utf8")).toBe("written by an OpenCode worker\n");
    expect(fs.statSync(onHost).uid).toBe(AGENT_UID);
    // The bridge reads the same file at the same path.
    const read = await edgeClient.get<{ ok: boolean; content?: string; text?: string }>(
      `${bases.r}/r?path=from-worker.txt`,
    );
    expect(JSON.stringify(read.body)).toContain("written by an OpenCode worker");
  });
});

describe("what the OpenCode container holds (docs/SECURITY.md)", () => {
  const inOpencode = (script: string) => execIn("opencode", ["sh", "-c", script]);

  it("runs as uid 1000 with no capabilities, no new privileges and a read-only root", async () => {
    expect((await inOpencode("id -u")).out.trim()).toBe(String(AGENT_UID));
    const status = (await inOpencode("cat /proc/self/status")).out;
    expect(status).toMatch(/^NoNewPrivs:\s+1$/m);
    expect(/^CapBnd:\s+([0-9a-f]+)$/m.exec(status)?.[1]).toBe("0000000000000000");
    const write = await inOpencode("touch /usr/local/probe");
    expect(write.code).not.toBe(0);
    expect(write.out).toMatch(/Read-only file system/);
  });

  it("has neither the bridge's state, its code, its processes nor the operator token", async () => {
    expect((await inOpencode("test -e /var/lib/urlbridge || test -e /app; echo $?")).out.trim()).toBe("1");
    expect((await inOpencode("env")).out).not.toMatch(/URLBRIDGE_|OPERATOR/);
    expect((await inOpencode("env")).out).not.toContain(operatorToken);
    // Its own pid namespace: the bridge's node process is not among its processes.
    const cmdlines = (await inOpencode("cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' '")).out;
    expect(cmdlines).toContain("opencode");
    expect(cmdlines).not.toContain("dist/server/main.js");
    const mounts = (await inOpencode("cat /proc/mounts")).out.split("\n").map((line) => line.split(" ")[1]);
    expect(mounts).toEqual(expect.arrayContaining(["/projects", "/var/lib/opencode", "/etc/opencode/opencode.json"]));
    expect(mounts.filter((m) => m?.startsWith("/var/lib/urlbridge"))).toEqual([]);
  });

  it("reaches the bridge's ports on the shared loopback only as any unauthenticated client", async () => {
    const fromOpencode = (url: string) =>
      execIn("opencode", ["node", "-e", fetchStatus(url)]).then((r) => r.out.trim());
    expect(await fromOpencode("http://127.0.0.1:47433/api/sessions")).toBe("401");
    expect(await fromOpencode("http://127.0.0.1:47432/v0/init/AAAAAAAAAAAAAAAAAAAAAA")).toBe("404");
    // Abstract Unix sockets belong to the network namespace too: the bridge listens on none.
    expect((await inOpencode("grep -c ' @' /proc/net/unix || true")).out.trim()).toBe("0");
  });

  it("is reached by an agent's terminal command on that loopback, which gets 401 without the password", async () => {
    const command = `node -e '${fetchStatus("http://127.0.0.1:4096/session")}'`;
    let body = (
      await edgeClient.get<{ ok: boolean; state?: string; poll?: string; exitCode?: number; stdout?: string }>(
        `${shellBases.m}/x?wait=1500&raw=${encodeUrlText(command)}`,
      )
    ).body;
    for (let i = 0; i < MAX_POLLS && (body.state === "pending" || body.state === "running"); i++)
      body = (await edgeClient.get<typeof body>(String(body.poll))).body;
    expect(body).toMatchObject({ ok: true, exitCode: 0, stdout: "401\n" });
  });
});

describe("restarts", () => {
  it("after the bridge restarts, OpenCode follows it into its new network namespace and a worker runs again", async () => {
    await compose(["restart", "bridge"]);
    // The entrypoint leaves after three 5 s misses of the bridge's port, and Docker starts it again inside the new
    // namespace: about 15 s, bounded here at 90 s.
    const basic = { authorization: `Basic ${Buffer.from(`opencode:${OPENCODE_PASSWORD}`).toString("base64")}` };
    const deadline = Date.now() + 90_000;
    let seen = "";
    while (Date.now() < deadline) {
      seen = (
        await execIn("bridge", ["node", "-e", fetchStatus("http://127.0.0.1:4096/global/health", basic)])
      ).out.trim();
      if (seen === "200") break;
      await new Promise((r) => setTimeout(r, 2_000));
    }
    expect(seen).toBe("200");
    expect(await compose(["logs", "opencode"])).toContain("the bridge's port 47433 left this network namespace");
    // A restarted container may get another ephemeral host port.
    controlUrl = `http://${(await compose(["port", "bridge", "47433"])).trim()}`;
    await discovered();
    await waitForPluginReady();
    const worker = await runWorker("Say hello after the restart");
    expect(worker.state, JSON.stringify(worker)).toBe("completed");
    expect(worker.result!.text).toContain("MOCK-REPLY to: Say hello after the restart");
  });

  it("keeps the plugin's pin when OpenCode alone restarts on its volume, and a worker runs again", async () => {
    await compose(["restart", "opencode"]);
    await compose(["up", "-d", "--no-build", "--wait", "opencode"]);
    // The status read is cached 5 s: let the answer from before the restart expire.
    await new Promise((r) => setTimeout(r, 5_500));
    // The pin is the directories OpenCode reports, which the image fixes: the same instance, never instance-changed.
    await waitForPluginReady();
    const worker = await runWorker("Say hello after OpenCode restarted");
    expect(worker.state, JSON.stringify(worker)).toBe("completed");
    expect(worker.result!.text).toContain("MOCK-REPLY to: Say hello after OpenCode restarted");
  });
});
