// The compose topology as Docker Compose itself resolves it (`docker compose config`), for the default file
// and each override in deploy/: what is published where, what the tunnel runs, and which variables are required.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "./support/containers.js";

const run = promisify(execFile);

interface PortSpec {
  host_ip?: string;
  target: number;
  published?: string;
}
interface ServiceSpec {
  image?: string;
  init?: boolean;
  restart?: string;
  ports?: PortSpec[];
  command?: string[];
  environment?: Record<string, string | null>;
  networks?: Record<string, unknown>;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
  volumes?: Array<{ type: string; source: string; target: string }>;
}
interface ComposeModel {
  services: Record<string, ServiceSpec>;
  networks: Record<string, unknown>;
  volumes: Record<string, unknown>;
}

/** Resolves the compose model with no .env file, so a developer's settings cannot change the answer. */
async function composeConfig(files: string[], env: Record<string, string> = {}): Promise<ComposeModel> {
  const args = ["compose", "--env-file", "/dev/null", ...files.flatMap((f) => ["-f", f]), "config", "--format", "json"];
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("URLBRIDGE_") && !k.startsWith("TUNNEL_") && !k.startsWith("COMPOSE_")));
  const { stdout } = await run("docker", args, { cwd: REPO_ROOT, env: { ...clean, ...env } });
  return JSON.parse(stdout) as ComposeModel;
}

async function composeError(files: string[], env: Record<string, string> = {}): Promise<string> {
  try {
    await composeConfig(files, env);
  } catch (error) {
    return String((error as { stderr?: string }).stderr ?? error);
  }
  throw new Error("compose config succeeded but should have failed");
}

describe("compose.yaml", () => {
  it("publishes only the control plane, on the host loopback; the tunnel publishes nothing", async () => {
    const model = await composeConfig(["compose.yaml"]);
    const { bridge, tunnel } = model.services;
    expect(Object.keys(model.services).sort()).toEqual(["bridge", "tunnel"]);
    expect(bridge!.ports).toEqual([expect.objectContaining({ host_ip: "127.0.0.1", target: 47433, published: "47433" })]);
    expect(tunnel!.ports ?? []).toEqual([]);
    expect(Object.keys(bridge!.networks!)).toEqual(["edge"]);
    expect(Object.keys(tunnel!.networks!)).toEqual(["edge"]);
  });

  it("runs a pinned cloudflared quick tunnel to the data plane, after the bridge is healthy", async () => {
    const { bridge, tunnel } = (await composeConfig(["compose.yaml"])).services;
    expect(tunnel!.image).toMatch(/^cloudflare\/cloudflared:\d{4}\.\d+\.\d+$/);
    expect(tunnel!.command).toEqual(["tunnel", "--url", "http://bridge:47432", "--metrics", "0.0.0.0:2000"]);
    expect(tunnel!.healthcheck!.test).toEqual(["CMD", "cloudflared", "tunnel", "--metrics", "127.0.0.1:2000", "ready"]);
    expect(tunnel!.depends_on).toMatchObject({ bridge: { condition: "service_healthy" } });
    expect(bridge!.environment!.URLBRIDGE_TUNNEL_METRICS).toBe("http://tunnel:2000");
  });

  it("keeps state in a named volume, projects in a bind mount, with init and restart policies", async () => {
    const model = await composeConfig(["compose.yaml"], { URLBRIDGE_PROJECTS: "/srv/code" });
    const { bridge, tunnel } = model.services;
    expect(bridge!.init).toBe(true);
    expect(bridge!.restart).toBe("unless-stopped");
    expect(tunnel!.restart).toBe("unless-stopped");
    expect(bridge!.volumes).toEqual([
      expect.objectContaining({ type: "volume", source: "state", target: "/var/lib/urlbridge" }),
      expect.objectContaining({ type: "bind", source: "/srv/code", target: "/projects" }),
    ]);
    expect(Object.keys(model.volumes)).toEqual(["state"]);
  });
});

describe("deploy/ overrides", () => {
  it("compose.local-data-plane.yaml adds the data plane on the host loopback only", async () => {
    const { bridge } = (await composeConfig(["compose.yaml", "deploy/compose.local-data-plane.yaml"])).services;
    expect(bridge!.ports!.map((p) => [p.host_ip, p.target, p.published])).toEqual([
      ["127.0.0.1", 47433, "47433"],
      ["127.0.0.1", 47432, "47432"],
    ]);
  });

  it("compose.named-tunnel.yaml runs `tunnel run` with TUNNEL_TOKEN and the operator's public origin", async () => {
    const env = { TUNNEL_TOKEN: "token-for-the-config-test", URLBRIDGE_PUBLIC_ORIGIN: "https://agents.example.com" };
    const { bridge, tunnel } = (await composeConfig(["compose.yaml", "deploy/compose.named-tunnel.yaml"], env)).services;
    expect(tunnel!.command).toEqual(["tunnel", "--metrics", "0.0.0.0:2000", "run"]);
    expect(tunnel!.environment!.TUNNEL_TOKEN).toBe("token-for-the-config-test");
    expect(bridge!.environment!.URLBRIDGE_PUBLIC_ORIGIN).toBe("https://agents.example.com");
    expect(tunnel!.ports ?? []).toEqual([]);
  });

  it.each([
    ["TUNNEL_TOKEN", { URLBRIDGE_PUBLIC_ORIGIN: "https://agents.example.com" }],
    ["URLBRIDGE_PUBLIC_ORIGIN", { TUNNEL_TOKEN: "token-for-the-config-test" }],
  ])("compose.named-tunnel.yaml refuses to start without %s", async (missing, env) => {
    expect(await composeError(["compose.yaml", "deploy/compose.named-tunnel.yaml"], env)).toContain(missing);
  });
});
