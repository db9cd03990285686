// Starts the urlbridge appliance image for a testcontainers suite the way compose.yaml runs it (read-only image,
// six capabilities, no new privileges, tmpfs scratch, init as PID 1, ports on the host's loopback only), with a
// project folder and its permissions, and hands back the control client, the Init URL, the bases and MCP URL.
import path from "node:path";
import { GenericContainer, Wait, type StartedNetwork, type StartedTestContainer } from "testcontainers";
import {
  createUrlbridgeControlClient,
  type UrlbridgeControlClient,
  type UrlbridgeProject,
  type UrlbridgeSession,
} from "./control-client.js";

/** The image's ports (Dockerfile EXPOSE): the control plane (UI + /api) and the agent-facing data plane. */
export const URLBRIDGE_CONTROL_PORT = 47433;
export const URLBRIDGE_DATA_PORT = 47432;
/** Where the image keeps its state (a volume) and where project folders are mounted. */
export const URLBRIDGE_STATE_DIR = "/var/lib/urlbridge";
export const URLBRIDGE_PROJECTS_DIR = "/projects";
/** The capabilities compose.yaml grants the bridge (docs/SECURITY.md, "Container hardening"). */
const BRIDGE_CAPABILITIES = ["CHOWN", "DAC_OVERRIDE", "FOWNER", "SETUID", "SETGID", "KILL"];
const DEFAULT_STARTUP_TIMEOUT_MS = 120_000;

export interface UrlbridgeProjectOptions {
  /**
   * Host folder the agent works on, mounted at /projects/<name>. Agents' terminal commands run as uid 1000, so
   * for `terminal` it must be writable by uid 1000 (e.g. chmod 0777 on a temp dir, or chown 1000:1000).
   */
  dir: string;
  /** Project name (also the mount's folder name); default "project". */
  name?: string;
  write?: boolean;
  terminal?: boolean;
}

export interface StartUrlbridgeOptions {
  /** The appliance image; default $URLBRIDGE_IMAGE, else urlbridge:local (what `docker compose build` makes). */
  image?: string;
  /** Adds this project and opens one session on it (`started.session`). */
  project?: UrlbridgeProjectOptions;
  /** Or mount a whole folder of projects at /projects, adding projects yourself (`started.control.addProject`). */
  projectsDir?: string;
  /** A named Docker volume for the state (SQLite, keys), to keep it across containers; default a fresh one. */
  stateVolume?: string;
  /** The operator token (URLBRIDGE_OPERATOR_TOKEN); default the one the bridge generates into its state. */
  operatorToken?: string;
  /** Publish the data plane on the host loopback and name it as the public origin (default true). */
  dataPlane?: boolean;
  /** Join a network (e.g. beside an edge or an agent container) under these aliases. */
  network?: StartedNetwork;
  networkAliases?: string[];
  /** Extra URLBRIDGE_* variables. */
  environment?: Record<string, string>;
  /** Docker container name; default one testcontainers picks. */
  name?: string;
  startupTimeoutMs?: number;
}

export interface StartedUrlbridge {
  container: StartedTestContainer;
  operatorToken: string;
  /** http://127.0.0.1:<port>: the control plane (UI + /api). */
  controlUrl: string;
  /** http://127.0.0.1:<port>: the data plane, when published. */
  dataUrl: string | undefined;
  control: UrlbridgeControlClient;
  /** The project and session made from `options.project`. */
  project: UrlbridgeProject | undefined;
  session: UrlbridgeSession | undefined;
  /** GET /api/health: ok, version, buildId (the image's content hash), degraded, store, sandbox. */
  health(): Promise<UrlbridgeHealth>;
  stop(): Promise<void>;
}

export interface UrlbridgeHealth {
  ok: boolean;
  version: string;
  buildId: string;
  degraded: boolean;
  [key: string]: unknown;
}

/** The appliance's container as compose.yaml configures it: loopback-only ports, init, and its hardening. */
class ApplianceContainer extends GenericContainer {
  protected override async beforeContainerCreated(): Promise<void> {
    for (const bindings of Object.values(
      (this.hostConfig.PortBindings ?? {}) as Record<string, Array<{ HostIp?: string }>>,
    )) {
      for (const binding of bindings) binding.HostIp = "127.0.0.1";
    }
    Object.assign(this.hostConfig, {
      Init: true,
      ReadonlyRootfs: true,
      CapDrop: ["ALL"],
      CapAdd: BRIDGE_CAPABILITIES,
      SecurityOpt: ["no-new-privileges:true"],
      Tmpfs: { "/tmp": "size=64m,mode=1777", "/var/lib/urlbridge-scratch": "size=256m,mode=0755,exec" },
    });
  }
}

/** Reads the token the bridge generated on its first start the way the guide does (`urlbridge token --show`). */
async function generatedOperatorToken(container: StartedTestContainer): Promise<string> {
  const result = await container.exec(["urlbridge", "token", "--show"]);
  if (result.exitCode !== 0)
    throw new Error(`urlbridge token --show exited ${result.exitCode}: ${result.stderr.trim()}`);
  return result.stdout.trim();
}

const projectName = (project: UrlbridgeProjectOptions) => project.name ?? "project";

export async function startUrlbridge(options: StartUrlbridgeOptions = {}): Promise<StartedUrlbridge> {
  const image = options.image ?? process.env.URLBRIDGE_IMAGE ?? "urlbridge:local";
  const publishData = options.dataPlane ?? true;
  const mounts: Array<{ source: string; target: string }> = [];
  if (options.projectsDir) mounts.push({ source: path.resolve(options.projectsDir), target: URLBRIDGE_PROJECTS_DIR });
  if (options.project)
    mounts.push({
      source: path.resolve(options.project.dir),
      target: `${URLBRIDGE_PROJECTS_DIR}/${projectName(options.project)}`,
    });
  if (options.stateVolume) mounts.push({ source: options.stateVolume, target: URLBRIDGE_STATE_DIR });

  let container = new ApplianceContainer(image)
    .withExposedPorts(...(publishData ? [URLBRIDGE_CONTROL_PORT, URLBRIDGE_DATA_PORT] : [URLBRIDGE_CONTROL_PORT]))
    .withEnvironment({
      ...(options.operatorToken ? { URLBRIDGE_OPERATOR_TOKEN: options.operatorToken } : {}),
      ...options.environment,
    })
    .withBindMounts(mounts)
    .withWaitStrategy(Wait.forHealthCheck())
    .withStartupTimeout(options.startupTimeoutMs ?? DEFAULT_STARTUP_TIMEOUT_MS);
  if (options.name) container = container.withName(options.name);
  if (options.network)
    container = container.withNetwork(options.network).withNetworkAliases(...(options.networkAliases ?? []));
  const started = await container.start();

  try {
    const operatorToken = options.operatorToken ?? (await generatedOperatorToken(started));
    const controlUrl = `http://127.0.0.1:${started.getMappedPort(URLBRIDGE_CONTROL_PORT)}`;
    const dataUrl = publishData ? `http://127.0.0.1:${started.getMappedPort(URLBRIDGE_DATA_PORT)}` : undefined;
    const control = createUrlbridgeControlClient(controlUrl, operatorToken);
    // The published port is the only way in from the host, so it is the origin Init URLs must carry.
    if (dataUrl) await control.setPublicOrigin(dataUrl);
    let project: UrlbridgeProject | undefined;
    let session: UrlbridgeSession | undefined;
    if (options.project) {
      const name = projectName(options.project);
      project = await control.addProject({
        name,
        root: `${URLBRIDGE_PROJECTS_DIR}/${name}`,
        write: options.project.write,
        terminal: options.project.terminal,
      });
      session = await control.createSession(project.id);
    }
    return {
      container: started,
      operatorToken,
      controlUrl,
      dataUrl,
      control,
      project,
      session,
      health: async () => (await (await fetch(`${controlUrl}/api/health`)).json()) as UrlbridgeHealth,
      stop: async () => {
        await started.stop({ timeout: 10_000 });
      },
    };
  } catch (error) {
    await started.stop({ timeout: 5_000 }).catch(() => undefined);
    throw error;
  }
}
