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
  profiles?: string[];
  pull_policy?: string;
  network_mode?: string;
  user?: string;
  init?: boolean;
  restart?: string;
  ports?: PortSpec[];
  command?: string[];
  environment?: Record<string, string | null>;
  networks?: Record<string, unknown>;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
  volumes?: Array<{ type: string; source: string; target: string; read_only?: boolean }>;
  read_only?: boolean;
  tmpfs?: string[];
  security_opt?: string[];
  cap_drop?: string[];
  cap_add?: string[];
  pids_limit?: number;
  oom_score_adj?: number;
  mem_limit?: string;
}
interface ComposeModel {
  services: Record<string, ServiceSpec>;
  networks: Record<string, { internal?: boolean; ipam?: { config?: Array<{ subnet: string }> } }>;
  volumes: Record<string, unknown>;
}

/** Resolves the compose model with no .env file, so a developer's settings cannot change the answer. */
async function composeConfig(files: string[], env: Record<string, string> = {}): Promise<ComposeModel> {
  const args = ["compose", "--env-file", "/dev/null", ...files.flatMap((f) => ["-f", f]), "config", "--format", "json"];
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !k.startsWith("URLBRIDGE_") && !k.startsWith("TUNNEL_") && !k.startsWith("COMPOSE_"),
    ),
  );
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
    expect(bridge!.ports).toEqual([
      expect.objectContaining({ host_ip: "127.0.0.1", target: 47433, published: "47433" }),
    ]);
    expect(tunnel!.ports ?? []).toEqual([]);
    expect(Object.keys(bridge!.networks!).sort()).toEqual(["control", "edge"]);
    expect(Object.keys(tunnel!.networks!).sort()).toEqual(["edge", "egress"]);
  });

  it("keeps the control plane off the tunnel's network: listens on loopback and its control alias only", async () => {
    const model = await composeConfig(["compose.yaml"]);
    const { bridge } = model.services;
    expect(bridge!.networks!.control).toEqual({ aliases: ["bridge-control"] });
    expect(bridge!.environment!.URLBRIDGE_CONTROL_HOST).toBe("127.0.0.1,bridge-control");
    expect(model.networks.edge!.internal).toBe(true);
    expect(model.networks.control!.internal ?? false).toBe(false);
    // The data plane believes cf-connecting-ip only from the tunnel container itself (its service name, resolved),
    // never from the whole edge network, where any other container could rotate the header (issue 28, item 6).
    expect(model.networks.edge!.ipam!.config![0]!.subnet).toBe("172.30.47.0/24");
    expect(bridge!.environment!.URLBRIDGE_TRUSTED_PROXIES).toBe("tunnel");
    const moved = await composeConfig(["compose.yaml"], { URLBRIDGE_EDGE_SUBNET: "10.91.0.0/24" });
    expect(moved.networks.edge!.ipam!.config![0]!.subnet).toBe("10.91.0.0/24");
    expect(moved.services.bridge!.environment!.URLBRIDGE_TRUSTED_PROXIES).toBe("tunnel");
  });

  it("hardens both containers: read-only, no new privileges, only the needed capabilities, pids and memory limits", async () => {
    const { bridge, tunnel } = (await composeConfig(["compose.yaml"])).services;
    for (const service of [bridge!, tunnel!]) {
      expect(service.read_only).toBe(true);
      expect(service.security_opt).toEqual(["no-new-privileges:true"]);
      expect(service.cap_drop).toEqual(["ALL"]);
    }
    expect(bridge!.cap_add).toEqual(["CHOWN", "DAC_OVERRIDE", "FOWNER", "SETUID", "SETGID", "KILL"]);
    expect(tunnel!.cap_add ?? []).toEqual([]);
    expect(bridge!.tmpfs).toEqual(["/tmp:size=64m,mode=1777", "/var/lib/urlbridge-scratch:size=512m,mode=0755,exec"]);
    expect(bridge!).toMatchObject({ pids_limit: 1024, mem_limit: String(2 * 1024 ** 3) });
    // 0 by default (compose's model leaves a 0 out): an engine without CAP_SYS_RESOURCE refuses a negative value.
    expect(bridge!.oom_score_adj ?? 0).toBe(0);
    // The agent limits reach the bridge from .env; empty means the defaults (docs/SECURITY.md, "Agent limits").
    for (const name of ["URLBRIDGE_AGENT_MEMORY_MB", "URLBRIDGE_AGENT_MAX_FILE_MB", "URLBRIDGE_SESSION_GROWTH_MB"])
      expect(bridge!.environment![name]).toBe("");
    expect(tunnel!).toMatchObject({ pids_limit: 256, mem_limit: String(512 * 1024 ** 2) });
  });

  it("lets the operator raise the bridge's limits and scratch size from .env", async () => {
    const env = {
      URLBRIDGE_PIDS_LIMIT: "4096",
      URLBRIDGE_MEM_LIMIT: "8g",
      URLBRIDGE_SCRATCH_SIZE: "2g",
      URLBRIDGE_OOM_SCORE_ADJ: "-900",
      URLBRIDGE_AGENT_MEMORY_MB: "4096",
    };
    const { bridge } = (await composeConfig(["compose.yaml"], env)).services;
    expect(bridge!).toMatchObject({ pids_limit: 4096, mem_limit: String(8 * 1024 ** 3), oom_score_adj: -900 });
    expect(bridge!.environment!.URLBRIDGE_AGENT_MEMORY_MB).toBe("4096");
    expect(bridge!.tmpfs).toContain("/var/lib/urlbridge-scratch:size=2g,mode=0755,exec");
  });

  it("runs a pinned cloudflared quick tunnel to the data plane, after the bridge is healthy", async () => {
    const { bridge, tunnel } = (await composeConfig(["compose.yaml"])).services;
    expect(tunnel!.image).toMatch(/^cloudflare\/cloudflared:\d{4}\.\d+\.\d+$/);
    expect(tunnel!.command).toEqual(["tunnel", "--url", "http://bridge:47432", "--metrics", "0.0.0.0:2000"]);
    expect(tunnel!.healthcheck!.test).toEqual(["CMD", "cloudflared", "tunnel", "--metrics", "127.0.0.1:2000", "ready"]);
    expect(tunnel!.depends_on).toMatchObject({ bridge: { condition: "service_healthy" } });
    expect(bridge!.environment!.URLBRIDGE_TUNNEL_METRICS).toBe("http://tunnel:2000");
  });

  it("runs urlbridge:local by default and the content tag named in URLBRIDGE_IMAGE otherwise, never pulled", async () => {
    const plain = (await composeConfig(["compose.yaml"])).services.bridge!;
    expect(plain).toMatchObject({ image: "urlbridge:local", pull_policy: "never" });
    const pinned = (await composeConfig(["compose.yaml"], { URLBRIDGE_IMAGE: "urlbridge:0.1.0-0123456789ab" })).services
      .bridge!;
    expect(pinned).toMatchObject({ image: "urlbridge:0.1.0-0123456789ab", pull_policy: "never" });
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

  it("compose.local-data-plane.yaml is the no-tunnel mode: plain `up` starts the bridge alone, watching no tunnel", async () => {
    const files = ["compose.yaml", "deploy/compose.local-data-plane.yaml"];
    const model = await composeConfig(files);
    expect(Object.keys(model.services)).toEqual(["bridge"]);
    expect(model.services.bridge!.environment).toMatchObject({
      URLBRIDGE_DATA_PLANE_ON_HOST: "1",
      URLBRIDGE_TUNNEL_METRICS: "",
      URLBRIDGE_TRUSTED_PROXIES: "",
    });
    // The tunnel is still there for whoever asks for it by profile.
    const args = ["compose", "--env-file", "/dev/null", ...files.flatMap((f) => ["-f", f]), "--profile", "tunnel"];
    const { stdout } = await run("docker", [...args, "config", "--services"], { cwd: REPO_ROOT });
    expect(stdout.trim().split("\n").sort()).toEqual(["bridge", "tunnel"]);
  });

  it("moves the host ports with URLBRIDGE_CONTROL_PORT and URLBRIDGE_DATA_PORT, the same inside and out", async () => {
    const env = { URLBRIDGE_CONTROL_PORT: "48433", URLBRIDGE_DATA_PORT: "48432" };
    const model = await composeConfig(["compose.yaml", "deploy/compose.local-data-plane.yaml"], env);
    const { bridge } = model.services;
    expect(bridge!.ports!.map((p) => [p.host_ip, p.target, p.published])).toEqual([
      ["127.0.0.1", 48433, "48433"],
      ["127.0.0.1", 48432, "48432"],
    ]);
    expect(bridge!.environment).toMatchObject(env);
    const { tunnel } = (await composeConfig(["compose.yaml"], env)).services;
    expect(tunnel!.command).toEqual(["tunnel", "--url", "http://bridge:48432", "--metrics", "0.0.0.0:2000"]);
  });

  it("compose.named-tunnel.yaml runs `tunnel run` with TUNNEL_TOKEN and the operator's public origin", async () => {
    const env = { TUNNEL_TOKEN: "token-for-the-config-test", URLBRIDGE_PUBLIC_ORIGIN: "https://agents.example.com" };
    const { bridge, tunnel } = (await composeConfig(["compose.yaml", "deploy/compose.named-tunnel.yaml"], env))
      .services;
    expect(tunnel!.command).toEqual(["tunnel", "--metrics", "0.0.0.0:2000", "run"]);
    expect(tunnel!.environment!.TUNNEL_TOKEN).toBe("token-for-the-config-test");
    expect(bridge!.environment!.URLBRIDGE_PUBLIC_ORIGIN).toBe("https://agents.example.com");
    expect(tunnel!.ports ?? []).toEqual([]);
  });

  it("compose.sandbox-containers.yaml gives the Docker socket to the bridge only and turns on container mode with host paths", async () => {
    const files = ["compose.yaml", "deploy/compose.sandbox-containers.yaml"];
    const { bridge, tunnel } = (await composeConfig(files, { URLBRIDGE_PROJECTS: "/srv/code" })).services;
    expect(bridge!.volumes).toContainEqual(
      expect.objectContaining({ type: "bind", source: "/var/run/docker.sock", target: "/var/run/docker.sock" }),
    );
    expect(bridge!.environment).toMatchObject({
      URLBRIDGE_SANDBOX: "container",
      URLBRIDGE_SANDBOX_HOST_PROJECTS: "/projects=/srv/code",
      URLBRIDGE_SANDBOX_NETWORK: "none",
    });
    expect((tunnel!.volumes ?? []).some((v) => v.source.includes("docker.sock"))).toBe(false);
    // The hardening of the default file is kept: the socket is the only thing added.
    expect(bridge!).toMatchObject({ read_only: true, security_opt: ["no-new-privileges:true"], cap_drop: ["ALL"] });
    expect(bridge!.cap_add).toEqual(["CHOWN", "DAC_OVERRIDE", "FOWNER", "SETUID", "SETGID", "KILL"]);
    // ...and the default file alone mounts no socket anywhere.
    const plain = (await composeConfig(["compose.yaml"], { URLBRIDGE_PROJECTS: "/srv/code" })).services;
    for (const service of Object.values(plain))
      expect((service.volumes ?? []).some((v) => v.source.includes("docker.sock"))).toBe(false);
    expect(await composeError(files)).toContain("URLBRIDGE_PROJECTS");
  });

  it.each([
    ["TUNNEL_TOKEN", { URLBRIDGE_PUBLIC_ORIGIN: "https://agents.example.com" }],
    ["URLBRIDGE_PUBLIC_ORIGIN", { TUNNEL_TOKEN: "token-for-the-config-test" }],
  ])("compose.named-tunnel.yaml refuses to start without %s", async (missing, env) => {
    expect(await composeError(["compose.yaml", "deploy/compose.named-tunnel.yaml"], env)).toContain(missing);
  });
});

describe('the "opencode" profile', () => {
  const withProfile = (env: Record<string, string> = {}) =>
    composeConfig(["compose.yaml"], { COMPOSE_PROFILES: "opencode", ...env });

  it("adds nothing to a plain `docker compose up`", async () => {
    const model = await composeConfig(["compose.yaml"]);
    expect(Object.keys(model.services).sort()).toEqual(["bridge", "tunnel"]);
    expect(Object.keys(model.volumes)).toEqual(["state"]);
  });

  it("runs a locally built OpenCode in the bridge's network namespace, after the bridge is healthy, with an init", async () => {
    const model = await withProfile();
    const opencode = model.services.opencode!;
    expect(Object.keys(model.services).sort()).toEqual(["bridge", "opencode", "tunnel"]);
    expect(opencode).toMatchObject({
      profiles: ["opencode"],
      image: "urlbridge-opencode:local",
      pull_policy: "never",
      init: true,
      network_mode: "service:bridge",
    });
    // Its own loopback is the bridge's: no networks and no published ports of its own.
    expect(opencode.networks ?? {}).toEqual({});
    expect(opencode.ports ?? []).toEqual([]);
    expect(opencode.depends_on).toMatchObject({ bridge: { condition: "service_healthy" } });
  });

  it("mounts the projects where the bridge does, its own state volume and the operator's config, never the bridge's state", async () => {
    const model = await withProfile({
      URLBRIDGE_PROJECTS: "/srv/code",
      URLBRIDGE_OPENCODE_CONFIG: "/etc/urlbridge/opencode.json",
    });
    const { bridge, opencode } = model.services;
    expect(opencode!.volumes).toEqual([
      expect.objectContaining({ type: "volume", source: "opencode-state", target: "/var/lib/opencode" }),
      expect.objectContaining({ type: "bind", source: "/srv/code", target: "/projects" }),
      expect.objectContaining({
        type: "bind",
        source: "/etc/urlbridge/opencode.json",
        target: "/etc/opencode/opencode.json",
        read_only: true,
      }),
    ]);
    expect(bridge!.volumes).toContainEqual(
      expect.objectContaining({ type: "bind", source: "/srv/code", target: "/projects" }),
    );
    expect(opencode!.volumes!.some((v) => v.source === "state" || v.target === "/var/lib/urlbridge")).toBe(false);
    expect(Object.keys(model.volumes).sort()).toEqual(["opencode-state", "state"]);
  });

  it("hands the server password to both sides and the operator token to neither OpenCode nor its config", async () => {
    const env = {
      URLBRIDGE_OPENCODE_PASSWORD: "opencode-password-for-the-config-test",
      URLBRIDGE_OPERATOR_TOKEN: "operator-token-for-the-config-test-0123",
    };
    const { bridge, opencode } = (await withProfile(env)).services;
    expect(opencode!.environment!.OPENCODE_SERVER_PASSWORD).toBe(env.URLBRIDGE_OPENCODE_PASSWORD);
    expect(bridge!.environment!.URLBRIDGE_OPENCODE_PASSWORD).toBe(env.URLBRIDGE_OPENCODE_PASSWORD);
    expect(opencode!.environment!.OPENCODE_CONFIG).toBe("/etc/opencode/opencode.json");
    expect(JSON.stringify(opencode)).not.toContain(env.URLBRIDGE_OPERATOR_TOKEN);
    expect(Object.keys(opencode!.environment!).filter((k) => k.startsWith("URLBRIDGE_"))).toEqual([]);
  });

  it("holds the terminal's line: uid 1000, read-only, no new privileges, no capabilities, limited", async () => {
    const { opencode } = (await withProfile()).services;
    expect(opencode).toMatchObject({
      user: "1000:1000",
      read_only: true,
      security_opt: ["no-new-privileges:true"],
      cap_drop: ["ALL"],
    });
    expect(opencode!.cap_add ?? []).toEqual([]);
    expect(opencode!.tmpfs).toEqual(["/tmp:size=256m,mode=1777"]);
    expect(opencode).toMatchObject({ pids_limit: 512, mem_limit: String(2 * 1024 ** 3) });
    const raised = (await withProfile({ URLBRIDGE_OPENCODE_PIDS_LIMIT: "2048", URLBRIDGE_OPENCODE_MEM_LIMIT: "4g" }))
      .services.opencode!;
    expect(raised).toMatchObject({ pids_limit: 2048, mem_limit: String(4 * 1024 ** 3) });
  });
});
