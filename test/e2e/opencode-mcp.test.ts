// A real OpenCode (opencode-ai 1.18.33, `opencode serve`) uses urlbridge's MCP tools through the tunnel edge stand-in:
// the appliance image and the edge stand-in on a private network as in appliance.test.ts, the edge cutting every
// Server-Sent Events answer (EDGE_SSE=cut, as the quick tunnel carries none), OpenCode on the host with an `mcp`
// entry for the bridge's public /mcp endpoint and a bearer capability, driven by a fake LLM provider that asks for
// one tool per prompt. It reads a file, edits it and runs a command; the files on disk, the activity log and the
// edge's access log show it, and no answer the edge carried was an event stream.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { StartedNetwork, StartedTestContainer } from "testcontainers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  buildBridgeImage,
  buildEdgeImage,
  CONTROL_PORT,
  EDGE_TLS_PORT,
  edgeCertificate,
  startApplianceWithEdge,
  stopAll,
} from "./support/containers.js";
import { createEdgeClient, waitForDiscoveredOrigin } from "./support/edge-client.js";
import { startMockLlm, type MockLlm } from "./support/mock-llm.js";
import { locateOpencode, startOpencode, type Opencode } from "./support/opencode.js";
import { mockProviderConfig } from "../helpers/opencode-process.js";

const EDGE_HOSTNAME = "e2e-edge.trycloudflare.com";
const EDGE_ORIGIN = `https://${EDGE_HOSTNAME}`;
/** One prompt is two fake-LLM turns around one MCP call through the edge: seconds, bounded well under the test's. */
const PROMPT_TIMEOUT_MS = 60_000;
/** The name of the bridge's entry under `mcp` in opencode.json: its tools reach the model as `ub_<tool>`. */
const SERVER_NAME = "ub";
const NODE_UID = 1000;

const located = locateOpencode();
/** CI names the binary explicitly (.ci/run): there a missing OpenCode fails; elsewhere it skips, saying why. */
const required = Boolean(process.env.URLBRIDGE_OPENCODE_BIN);
if ("missing" in located && !required) process.stderr.write(`opencode-mcp.test.ts skipped: ${located.missing}\n`);

interface ActivityRow {
  route: string;
  tool: string | null;
  ok: boolean;
  errorCode: string | null;
  params: Record<string, string> | null;
}
interface PromptAnswer {
  info: { id: string; finish?: string; error?: unknown };
  parts: Array<{ type: string; text?: string }>;
}

let network: StartedNetwork | undefined;
let bridge: StartedTestContainer | undefined;
let edge: StartedTestContainer | undefined;
let llm: MockLlm | undefined;
let opencode: Opencode | undefined;
let workDir: string;
let demoDir: string;
let opencodeProject: string;
let operatorToken: string;
let sessionId: string;
let opencodeSession: string;

const controlUrl = () => `http://127.0.0.1:${bridge!.getMappedPort(CONTROL_PORT)}`;

async function api<T>(route: string): Promise<T> {
  const res = await fetch(`${controlUrl()}${route}`, {
    headers: { authorization: `Bearer ${operatorToken}` },
    signal: AbortSignal.timeout(10_000),
  });
  if (res.status !== 200) throw new Error(`GET ${route} answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as T;
}

async function execIn(container: StartedTestContainer, command: string[]): Promise<string> {
  const result = await container.exec(command);
  if (result.exitCode !== 0)
    throw new Error(`${command.slice(0, 3).join(" ")} exited ${result.exitCode}: ${result.stderr}`);
  return result.stdout;
}

/** Init URLs carry the tunnel origin once the bridge has discovered it. */
const discovered = () =>
  waitForDiscoveredOrigin(async () => (await api<{ origin: string }>("/api/tunnel")).origin, EDGE_ORIGIN);

/** Sends one prompt to the OpenCode session and returns the fake LLM's requests it caused. */
async function prompt(text: string): Promise<{ answer: PromptAnswer; requests: MockLlm["requests"] }> {
  const before = llm!.requests.length;
  const directory = `directory=${encodeURIComponent(opencodeProject)}`;
  const res = await opencode!.request<PromptAnswer>(
    "POST",
    `/session/${opencodeSession}/message?${directory}`,
    { parts: [{ type: "text", text }] },
    PROMPT_TIMEOUT_MS,
  );
  if (res.status !== 200)
    throw new Error(`prompt answered ${res.status}: ${JSON.stringify(res.body)}\n${opencode!.output()}`);
  return { answer: res.body, requests: llm!.requests.slice(before) };
}

const answerText = (answer: PromptAnswer) =>
  answer.parts
    .filter((p) => p.type === "text")
    .map((p) => p.text ?? "")
    .join("");

/** The edge stand-in's access log lines for the bridge's /mcp endpoint. */
async function edgeMcpLog(): Promise<string[]> {
  const log = await execIn(edge!, ["cat", "/tmp/edge-access.log"]);
  return log.split("\n").filter((line) => / \/mcp /.test(line));
}

describe.skipIf("missing" in located && !required)("OpenCode over MCP through the edge stand-in", () => {
  beforeAll(async () => {
    if ("missing" in located) throw new Error(located.missing);
    await buildBridgeImage();
    await buildEdgeImage();

    workDir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "urlbridge-e2e-opencode-")));
    const projectsDir = path.join(workDir, "projects");
    demoDir = path.join(projectsDir, "demo");
    fs.mkdirSync(demoDir, { recursive: true });
    // The container's node user (uid 1000) must reach the mount and write into the project.
    fs.chmodSync(workDir, 0o755);
    fs.chmodSync(projectsDir, 0o755);
    fs.chmodSync(demoDir, 0o777);
    fs.writeFileSync(path.join(demoDir, "notes.md"), "# Notes\nstatus: draft\nthe third line\n");
    fs.chmodSync(path.join(demoDir, "notes.md"), 0o666);

    ({ network, bridge, edge } = await startApplianceWithEdge(projectsDir, { EDGE_SSE: "cut" }));

    operatorToken = (await execIn(bridge, ["urlbridge", "token", "--show"])).trim();
    await discovered();
    await execIn(bridge, ["urlbridge", "project", "add", "demo", "/projects/demo", "--write", "--terminal", "--json"]);
    const session = JSON.parse(await execIn(bridge, ["urlbridge", "session", "create", "demo", "--json"])) as {
      id: string;
      initUrl: string;
    };
    sessionId = session.id;

    // The agent's view: Init through the edge gives the mutation base, whose last segment is the capability.
    const ca = await edgeCertificate(edge);
    const edgePort = edge.getMappedPort(EDGE_TLS_PORT);
    const init = await createEdgeClient({ origin: EDGE_ORIGIN, port: edgePort, ca }).get<{ bases: { m: string } }>(
      session.initUrl,
    );
    expect(init.status).toBe(200);
    const capability = init.body.bases.m.split("/").pop()!;

    llm = await startMockLlm();
    const home = path.join(workDir, "opencode-home");
    opencodeProject = path.join(workDir, "opencode-project");
    fs.mkdirSync(home);
    fs.mkdirSync(opencodeProject);
    const caFile = path.join(workDir, "edge-ca.pem");
    fs.writeFileSync(caFile, ca);
    // OpenCode's own file and shell tools are denied: whatever changes the project goes through urlbridge.
    fs.writeFileSync(
      path.join(opencodeProject, "opencode.json"),
      JSON.stringify(
        mockProviderConfig(llm.baseURL, "mock-key", {
          permission: { edit: "deny", bash: "deny", webfetch: "deny", task: "deny" },
          // The edge's published port stands in for the tunnel hostname; its certificate names 127.0.0.1.
          mcp: {
            [SERVER_NAME]: {
              type: "remote",
              url: `https://127.0.0.1:${edgePort}/mcp`,
              oauth: false,
              headers: { Authorization: "Bearer {env:UB_TOKEN}" },
            },
          },
        }),
        null,
        2,
      ),
    );
    execFileSync("git", ["init", "-q"], { cwd: opencodeProject });
    opencode = await startOpencode({
      bin: located.bin,
      projectDir: opencodeProject,
      homeDir: home,
      env: { UB_TOKEN: capability, NODE_EXTRA_CA_CERTS: caFile },
    });
    const created = await opencode.request<{ id: string }>(
      "POST",
      `/session?directory=${encodeURIComponent(opencodeProject)}`,
      { title: "urlbridge e2e" },
    );
    expect(created.status).toBe(200);
    opencodeSession = created.body.id;
  });

  afterAll(async () => {
    await opencode?.stop();
    await llm?.close();
    await stopAll([edge, bridge]);
    await network?.stop().catch(() => undefined);
    if (workDir) fs.rmSync(workDir, { recursive: true, force: true });
  });

  it("offers urlbridge's tools to the model under the server's name", async () => {
    const { requests, answer } = await prompt("Say hello");
    expect(answerText(answer)).toContain("MOCK-REPLY");
    const offered = requests[0]!.tools;
    for (const tool of ["read", "edit", "shell"])
      expect(offered, opencode!.output()).toContain(`${SERVER_NAME}_${tool}`);
  });

  it("reads a file through urlbridge", async () => {
    const { requests, answer } = await prompt(`TOOLCALL:${SERVER_NAME}_read {"path":"notes.md"}`);
    expect(requests.map((r) => ("tool" in r.plan ? r.plan.tool : "text"))).toEqual([`${SERVER_NAME}_read`, "text"]);
    const result = requests[1]!.toolResult!;
    expect(result).toContain("status: draft");
    expect(result).toContain("the third line");
    expect(answerText(answer)).toContain("MOCK-DONE");
  });

  it("edits the file: the change is on disk", async () => {
    const { requests } = await prompt(
      `TOOLCALL:${SERVER_NAME}_edit {"path":"notes.md","oldString":"status: draft","newString":"status: edited by opencode"}`,
    );
    expect(requests.map((r) => ("tool" in r.plan ? r.plan.tool : "text"))).toEqual([`${SERVER_NAME}_edit`, "text"]);
    expect(fs.readFileSync(path.join(demoDir, "notes.md"), "utf8")).toBe(
      "# Notes\nstatus: edited by opencode\nthe third line\n",
    );
  });

  it("runs a command in the project as the sandbox user", async () => {
    const command = "echo ran-by-opencode > shell-out.txt && id -u";
    const { requests } = await prompt(`TOOLCALL:${SERVER_NAME}_shell ${JSON.stringify({ command })}`);
    expect(requests.map((r) => ("tool" in r.plan ? r.plan.tool : "text"))).toEqual([`${SERVER_NAME}_shell`, "text"]);
    expect(requests[1]!.toolResult).toContain(String(NODE_UID));
    const written = path.join(demoDir, "shell-out.txt");
    expect(fs.readFileSync(written, "utf8")).toBe("ran-by-opencode\n");
    expect(fs.statSync(written).uid).toBe(NODE_UID);
  });

  it("shows the three calls in the activity log, as MCP calls", async () => {
    const rows = await api<ActivityRow[]>(`/api/activity?sessionId=${encodeURIComponent(sessionId)}&limit=200`);
    const mcp = rows.filter((row) => row.route === "/mcp");
    // The kernel tool is the row's tool; the MCP tool name is params.mcp; content fields are sizes only.
    const find = (mcpName: string, tool: string) => mcp.find((row) => row.tool === tool && row.params?.mcp === mcpName);
    expect(find("read", "read"), JSON.stringify(rows)).toMatchObject({ ok: true, params: { path: "notes.md" } });
    expect(find("edit", "edit"), JSON.stringify(rows)).toMatchObject({
      ok: true,
      params: { path: "notes.md", newString: "<26 bytes>" },
    });
    expect(find("shell", "terminal"), JSON.stringify(rows)).toMatchObject({
      ok: true,
      params: { command: "<45 bytes>" },
    });
    // No content in the log: the edit's strings and the command's output never appear.
    expect(JSON.stringify(mcp)).not.toContain("edited by opencode");
    expect(JSON.stringify(mcp)).not.toContain("ran-by-opencode");
  });

  it("went through the edge, which carried no event stream", async () => {
    // The stand-in really runs in cut mode: an event stream would have reached OpenCode without a single event.
    expect(JSON.parse(await execIn(edge!, ["cat", "/tmp/edge-config.json"]))).toMatchObject({ sse: "cut" });
    const lines = await edgeMcpLog();
    const posts = lines.filter((line) => line.startsWith("POST /mcp 200 "));
    // initialize, tools/list and the three calls at least.
    expect(posts.length, lines.join("\n")).toBeGreaterThanOrEqual(5);
    for (const line of posts) expect(line).toContain("ct=application/json");
    expect(
      lines.filter((line) => line.includes("event-stream")),
      lines.join("\n"),
    ).toEqual([]);
  });
});
