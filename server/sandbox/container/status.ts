// What URLBRIDGE_SANDBOX=container enforces on terminal commands, for /api/health and the control UI: the same
// fields as the Landlock launcher's status (server/sandbox/launcher.ts), plus the containers' settings.
import type { Config } from "../../config.js";
import { DEFAULT_SANDBOX_IMAGE, DEFAULT_SANDBOX_LIMITS } from "./spec.js";

export interface ContainerSandboxStatus {
  mode: "container";
  configured: "container";
  /** Not used in this mode: the container's namespaces and mounts confine commands. */
  landlockAbi: 0;
  /** Commands see their project at /project, the image read-only and a private /tmp; nothing else of the host. */
  filesystem: true;
  /** The bridge is not in the sandbox's pid namespace: its /proc, environment and memory are out of reach. */
  procProtection: true;
  /** Nor can commands signal it, or another project's processes (a project's sessions share one container). */
  signals: true;
  /** Abstract Unix sockets live per network namespace: a sandbox has its own unless URLBRIDGE_SANDBOX_NETWORK=host. */
  abstractSockets: boolean;
  /** True when sandboxes have no network (URLBRIDGE_SANDBOX_NETWORK=none, the default). */
  network: boolean;
  /** Commands run as the project's owner (uid 1000 by default), never root, with no capabilities. */
  identitySeparation: true;
  /** One container per project root (its folder, each worktree session's), mounting only that root of the host. */
  perProjectIsolation: true;
  container: {
    image: string;
    network: string;
    cpus: number;
    memoryMb: number;
    pids: number;
    tmpMb: number;
    /** The bridge holds the Docker socket (root on the host); sandboxes never see it. */
    dockerSocketHeldByBridge: true;
  };
  warning?: string;
}

const MIB = 1024 ** 2;

export function containerSandboxStatus(config: Pick<Config, "sandboxContainer">): ContainerSandboxStatus {
  const settings = config.sandboxContainer;
  return {
    mode: "container",
    configured: "container",
    landlockAbi: 0,
    filesystem: true,
    procProtection: true,
    signals: true,
    abstractSockets: settings.network !== "host",
    network: settings.network === "none",
    identitySeparation: true,
    perProjectIsolation: true,
    container: {
      image: settings.image ?? DEFAULT_SANDBOX_IMAGE,
      network: settings.network,
      cpus: settings.cpus ?? DEFAULT_SANDBOX_LIMITS.cpus,
      memoryMb: settings.memoryMb ?? DEFAULT_SANDBOX_LIMITS.memoryBytes / MIB,
      pids: settings.pids ?? DEFAULT_SANDBOX_LIMITS.pids,
      tmpMb: settings.tmpMb ?? DEFAULT_SANDBOX_LIMITS.tmpBytes / MIB,
      dockerSocketHeldByBridge: true,
    },
    ...(settings.network === "none"
      ? {}
      : {
          warning: `Sandbox containers are on the Docker network "${settings.network}" (URLBRIDGE_SANDBOX_NETWORK): commands can open connections there.`,
        }),
  };
}
