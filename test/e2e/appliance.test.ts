// The Docker appliance end to end: the image built from our Dockerfile, started as compose.yaml starts it, behind
// a quick-tunnel stand-in for the Cloudflare edge (edge-standin/edge.mjs) on a private network. Proves what the
// host can reach, tunnel discovery into Init URLs, the non-root terminal on the bind mount, and the journal across
// `docker restart`.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { StartedNetwork, StartedTestContainer } from "testcontainers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeUrlText } from "../../server/url-grammar/encode.js";
import {
  buildBridgeImage,
  buildEdgeImage,
  CONTROL_PORT,
  DATA_PORT,
  EDGE_TLS_PORT,
  edgeCertificate,
  inspectPorts,
  startApplianceWithEdge,
  stopAll,
} from "./support/containers.js";
import { createEdgeClient, type EdgeClient } from "./support/edge-client.js";

/**
 * What the edge stand-in's /quicktunnel reports: a <label>.trycloudflare.com name, the only kind the bridge
 * trusts. The edge client connects to the stand-in's published port and sends this name in Host and SNI.
 */
const EDGE_HOSTNAME = "e2e-edge.trycloudflare.com";
const EDGE_ORIGIN = `https://${EDGE_HOSTNAME}`;
const NODE_UID = 1000;
/** The bridge polls the metrics server every 5 s; allow a few rounds. */
const DISCOVERY_TIMEOUT_MS = 30_000;
const MAX_POLLS = 60;

type Body = Record<string, unknown> & { ok: boolean };
interface TunnelView {
  origin: string;
  source: string;
  tunnel: { hostname?: string; ready: boolean; reachable: boolean };
}
interface SessionJson {
  id: string;
  initUrl: string;
}

let network: StartedNetwork | undefined;
let bridge: StartedTestContainer | undefined;
let edge: StartedTestContainer | undefined;
let projectsDir: string;
let demoDir: string;
let operatorToken: string;
let edgeClient: EdgeClient;

const controlUrl = () => `http://127.0.0.1:${bridge!.getMappedPort(CONTROL_PORT)}`;

/** Calls the control API from the host; `auth: false` sends no operator token. */
async function api<T>(method: string, route: string, auth = true): Promise<{ status: number; body: T }> {
  const res = await fetch(`${controlUrl()}${route}`, {
    method,
    headers: auth ? { authorization: `Bearer ${operatorToken}` } : {},
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
}

async function execInBridge(command: string[]): Promise<string> {
  const result = await bridge!.exec(command);
  if (result.exitCode !== 0)
    throw new Error(`${command.slice(0, 3).join(" ")} exited ${result.exitCode}: ${result.stderr}`);
  return result.stdout;
}

/** GETs a mutation URL through the edge and follows its poll URL until the intent settles. */
async function settle(url: string): Promise<Body> {
  let body = (await edgeClient.get<Body>(url)).body;
  for (let i = 0; i < MAX_POLLS && (body.state === "pending" || body.state === "running"); i++) {
    body = (await edgeClient.get<Body>(String(body.poll))).body;
  }
  return body;
}

async function waitForDiscoveredOrigin(): Promise<TunnelView> {
  await expect
    .poll(async () => (await api<TunnelView>("GET", "/api/tunnel")).body.origin, {
      timeout: DISCOVERY_TIMEOUT_MS,
      interval: 250,
    })
    .toBe(EDGE_ORIGIN);
  return (await api<TunnelView>("GET", "/api/tunnel")).body;
}

beforeAll(async () => {
  // Builds run one after the other: the machine has two cores shared with everything else.
  await buildBridgeImage();
  await buildEdgeImage();

  projectsDir = fs.mkdtempSync(path.join(os.tmpdir(), "urlbridge-e2e-projects-"));
  demoDir = path.join(projectsDir, "demo");
  fs.mkdirSync(demoDir);
  // The container's node user (uid 1000) must reach the mount (mkdtemp makes it 0700) and write into the
  // project, whoever runs the test.
  fs.chmodSync(projectsDir, 0o755);
  fs.chmodSync(demoDir, 0o777);
  fs.writeFileSync(path.join(demoDir, "README.md"), "# demo\n");
  fs.writeFileSync(path.join(demoDir, "app.ts"), 'import fs from "node:fs";\nexport function main(): void {}\n');
  fs.writeFileSync(
    path.join(demoDir, "tool.py"),
    "import os\n\nclass Tool:\n    def run(self):\n        return os.sep\n",
  );

  ({ network, bridge, edge } = await startApplianceWithEdge(projectsDir));

  // The generated operator token, read the way the guide says; never printed.
  operatorToken = (await execInBridge(["urlbridge", "token", "--show"])).trim();
  const ca = await edgeCertificate(edge);
  edgeClient = createEdgeClient({ origin: EDGE_ORIGIN, port: edge.getMappedPort(EDGE_TLS_PORT), ca });
});

afterAll(async () => {
  await stopAll([edge, bridge]);
  await network?.stop().catch(() => undefined);
  if (projectsDir) fs.rmSync(projectsDir, { recursive: true, force: true });
});

describe("docker appliance", () => {
  let session: SessionJson;
  let initBases: { r: string; m: string };

  it("publishes only the control plane, and only on the host loopback", async () => {
    const ports = await inspectPorts(bridge!);
    expect(ports.exposed).toEqual([`${DATA_PORT}/tcp`, `${CONTROL_PORT}/tcp`]);
    expect(Object.keys(ports.requested)).toEqual([`${CONTROL_PORT}/tcp`]);
    const control = ports.published[`${CONTROL_PORT}/tcp`];
    expect(control).toHaveLength(1);
    expect(control![0]!.HostIp).toBe("127.0.0.1");
    expect(Number(control![0]!.HostPort)).toBe(bridge!.getMappedPort(CONTROL_PORT));
    // Exposed by the image but bound to no host port: the data plane is not reachable from the host.
    expect(ports.published[`${DATA_PORT}/tcp`] ?? null).toBeNull();
  });

  it("answers the control API on that port, with operator auth, and never serves agent routes there", async () => {
    expect((await api<{ ok: boolean }>("GET", "/api/health", false)).body.ok).toBe(true);
    expect((await api("GET", "/api/sessions", false)).status).toBe(401);
    expect((await api("GET", "/api/sessions")).status).toBe(200);
    expect((await fetch(`${controlUrl()}/v0/init/AAAAAAAA`)).status).not.toBe(200);
  });

  it("discovers the tunnel hostname from the metrics server and puts it into Init URLs", async () => {
    const tunnel = await waitForDiscoveredOrigin();
    expect(tunnel).toMatchObject({
      source: "quick_tunnel",
      tunnel: { hostname: EDGE_HOSTNAME, ready: true, reachable: true },
    });

    const project = JSON.parse(
      await execInBridge(["urlbridge", "project", "add", "demo", "/projects/demo", "--write", "--terminal", "--json"]),
    ) as {
      root: string;
    };
    expect(project.root).toBe("/projects/demo");
    session = JSON.parse(await execInBridge(["urlbridge", "session", "create", "demo", "--json"])) as SessionJson;
    expect(session.initUrl).toMatch(/^https:\/\/e2e-edge\.trycloudflare\.com\/v0\/init\/[A-Za-z0-9]{8}$/);
  });

  it("serves the data plane through the edge, with bases on the discovered origin, and not the control API", async () => {
    const init = await edgeClient.get<{ bases: { r: string; m: string } }>(session.initUrl);
    expect(init.status).toBe(200);
    expect(init.body.bases.r.startsWith(`${EDGE_ORIGIN}/v0/`)).toBe(true);
    expect(init.body.bases.m.startsWith(`${EDGE_ORIGIN}/v0/`)).toBe(true);
    initBases = init.body.bases;

    const stat = await edgeClient.get<Body>(`${initBases.r}/t?path=README.md`);
    expect(stat.body.ok).toBe(true);
    // The tunnel carries the data plane only: the operator API is not there.
    expect((await edgeClient.get(`${EDGE_ORIGIN}/api/health`)).status).toBe(404);
    expect((await edgeClient.get(`${EDGE_ORIGIN}/api/sessions`)).status).toBe(404);
  });

  it("outlines TypeScript and Python in the image's outline worker (its own bundle entry, the compiler and tree-sitter from node_modules)", async () => {
    const ts = await edgeClient.get<Body>(`${initBases.r}/o?path=app.ts`);
    expect(ts.body).toMatchObject({
      ok: true,
      language: "typescript",
      imports: [{ line: 1, from: "node:fs" }],
      declarations: [{ kind: "function", name: "main", exported: true }],
    });
    const py = await edgeClient.get<Body>(`${initBases.r}/o?path=tool.py`);
    expect(py.body).toMatchObject({ ok: true, language: "python", declarations: [{ kind: "class", name: "Tool" }] });
  });

  it("meets the quick tunnel's limits on the way: a target over 32 KB is the edge's 414, never the bridge's", async () => {
    const long = await edgeClient.get(`${initBases.r}/r?path=${"a".repeat(33 * 1024)}`);
    expect(long.status).toBe(414);
    expect(String(long.body)).toContain("URI Too Long");
  });

  it("runs a terminal command as the non-root node user and writes into the bind-mounted project", async () => {
    const command =
      "id -u; echo written-by-$(id -un) > from-container.txt; git --version >/dev/null && rg --version >/dev/null && python3 --version >/dev/null && echo tools-ok";
    const body = await settle(`${initBases.m}/x?wait=1500&raw=${encodeUrlText(command)}`);
    expect(body).toMatchObject({ ok: true, exitCode: 0 });
    expect(body.stdout).toBe(`${NODE_UID}\ntools-ok\n`);
    const written = path.join(demoDir, "from-container.txt");
    expect(fs.readFileSync(written, "utf8")).toBe("written-by-node\n");
    expect(fs.statSync(written).uid).toBe(NODE_UID);
  });

  it("keeps sessions, capabilities and the journal across docker restart: replayed mutations do not run again", async () => {
    const append = `${initBases.m}/x?wait=1500&raw=${encodeUrlText("echo ran >> journal.log; wc -l < journal.log")}`;
    const write = `${initBases.m}/w?path=notes.txt&raw=${encodeUrlText("written once\n")}`;
    const first = await settle(append);
    expect(first).toMatchObject({ ok: true, stdout: "1\n" });
    expect(await settle(write)).toMatchObject({ ok: true });
    // Someone changes the file afterwards; a replayed write must not clobber it.
    fs.writeFileSync(path.join(demoDir, "notes.txt"), "changed on the host\n");

    for (const [how, timeout] of [
      ["graceful docker restart", 10_000],
      ["docker restart that kills at once", 0],
    ] as const) {
      await bridge!.restart({ timeout });
      await waitForDiscoveredOrigin();

      const sessions = await api<SessionJson[]>("GET", "/api/sessions");
      expect(sessions.status, how).toBe(200);
      expect(sessions.body.find((s) => s.id === session.id)?.initUrl, how).toBe(session.initUrl);
      expect((await edgeClient.get(session.initUrl)).status, how).toBe(200);

      const replayed = await settle(append);
      expect(replayed, how).toMatchObject({ ok: true, dedupe: "replayed", stdout: "1\n", callId: first.callId });
      expect(fs.readFileSync(path.join(demoDir, "journal.log"), "utf8"), how).toBe("ran\n");
      expect(await settle(write), how).toMatchObject({ dedupe: "replayed" });
      expect(fs.readFileSync(path.join(demoDir, "notes.txt"), "utf8"), how).toBe("changed on the host\n");
    }
  });
});
