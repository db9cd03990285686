// What a project's sandbox container looks like (URLBRIDGE_SANDBOX=container), one per root its sessions work in (the
// project folder, each worktree session's own): the Docker create options, the labels that find it again, and a
// hash of the settings so a changed image or limit makes a new container.
import { createHash } from "node:crypto";
import type { ContainerCreateOptions } from "dockerode";
import type { Identity } from "../identity.js";

/** Where the project's root appears inside its container: the same /project the agent is told about. */
export const CONTAINER_PROJECT_PATH = "/project";
/** The stand-in image every engine here has; operators choose their own (a toolchain image) with `image`. */
export const DEFAULT_SANDBOX_IMAGE = "node:20-bookworm-slim";

export const LABEL_ROLE = "urlbridge.role";
export const LABEL_PROJECT = "urlbridge.project";
export const LABEL_INSTANCE = "urlbridge.instance";
export const LABEL_SPEC = "urlbridge.spec";
/** The root (as the bridge sees it) the container mounts at /project: the project folder or a session's worktree. */
export const LABEL_ROOT = "urlbridge.root";
export const SANDBOX_ROLE = "project-sandbox";

export interface SandboxLimits {
  /** CPUs the container may use (fractions allowed). */
  cpus: number;
  /** Memory including the /tmp tmpfs; swap is not allowed on top. */
  memoryBytes: number;
  /** Processes and threads at once: a fork bomb stops here. */
  pids: number;
  /** Size of the container's own /tmp (its scratch space, cleared when its processes are ended). */
  tmpBytes: number;
}

export const DEFAULT_SANDBOX_LIMITS: SandboxLimits = {
  cpus: 1,
  memoryBytes: 1024 ** 3,
  pids: 512,
  tmpBytes: 256 * 1024 ** 2,
};

export interface SandboxSpec {
  projectId: string;
  /** The root as the bridge sees it (absolute): the container is this root's (issue 31: a worktree has its own). */
  root: string;
  /** The project root as the Docker engine sees it (a host path), bind-mounted at /project. */
  hostRoot: string;
  /**
   * Folders mounted read-only at the path the bridge sees them at, keyed by that path, valued by the engine's
   * host path: a linked worktree's main repository metadata, which its `.git` file names (issue 31).
   */
  readOnlyMounts?: Record<string, string>;
  identity: Identity;
  image: string;
  /** "none" (the default: no interface but loopback) or a Docker network the operator allows. */
  network: string;
  limits: SandboxLimits;
  /** Tells apart bridges that share one Docker engine (and test runs). */
  instance: string;
}

/** A short stable key of a root, for the container's name (its full path is in its LABEL_ROOT label). */
export function rootKey(root: string): string {
  return createHash("sha256").update(root).digest("hex").slice(0, 10);
}

/** A readable, valid container name for the spec (Docker allows [a-zA-Z0-9][a-zA-Z0-9_.-]*). */
export function containerName(spec: Pick<SandboxSpec, "projectId" | "instance" | "root">): string {
  const safe = (text: string) => text.replace(/[^a-zA-Z0-9_.-]/g, "-").slice(0, 60);
  return `urlbridge-${safe(spec.instance)}-${safe(spec.projectId)}-${rootKey(spec.root)}`;
}

/** A hash of everything that shapes the container: a container whose label differs is replaced. */
export function specHash(spec: SandboxSpec): string {
  return createHash("sha256")
    .update(
      JSON.stringify([spec.hostRoot, spec.identity, spec.image, spec.network, spec.limits, spec.readOnlyMounts ?? {}]),
    )
    .digest("hex")
    .slice(0, 16);
}

export function sandboxLabels(spec: Pick<SandboxSpec, "projectId" | "instance" | "root">): Record<string, string> {
  return {
    [LABEL_ROLE]: SANDBOX_ROLE,
    [LABEL_PROJECT]: spec.projectId,
    [LABEL_INSTANCE]: spec.instance,
    [LABEL_ROOT]: spec.root,
  };
}

/**
 * The create options. The root is the only project mount (a worktree's main repository metadata read-only beside
 * it); the agent's identity, never root; no capabilities and no privilege gain (setuid binaries stay inert); a
 * read-only image with a size-limited /tmp; an init as PID 1 that reaps orphans, whose end ends every process in
 * the container.
 */
export function containerCreateOptions(spec: SandboxSpec): ContainerCreateOptions {
  const { limits } = spec;
  return {
    name: containerName(spec),
    Image: spec.image,
    Cmd: ["sleep", "infinity"],
    User: `${spec.identity.uid}:${spec.identity.gid}`,
    WorkingDir: CONTAINER_PROJECT_PATH,
    Env: ["HOME=/tmp", "TMPDIR=/tmp", "CI=1", "TERM=dumb"],
    Hostname: "sandbox",
    Labels: { ...sandboxLabels(spec), [LABEL_SPEC]: specHash(spec) },
    NetworkDisabled: spec.network === "none",
    HostConfig: {
      Binds: [
        `${spec.hostRoot}:${CONTAINER_PROJECT_PATH}:rw`,
        ...Object.entries(spec.readOnlyMounts ?? {}).map(([at, host]) => `${host}:${at}:ro`),
      ],
      NetworkMode: spec.network,
      Init: true,
      CapDrop: ["ALL"],
      SecurityOpt: ["no-new-privileges"],
      ReadonlyRootfs: true,
      Tmpfs: { "/tmp": `rw,nosuid,nodev,size=${limits.tmpBytes},mode=1777` },
      IpcMode: "private",
      NanoCpus: Math.round(limits.cpus * 1e9),
      Memory: limits.memoryBytes,
      MemorySwap: limits.memoryBytes,
      PidsLimit: limits.pids,
      RestartPolicy: { Name: "no" },
      Privileged: false,
    },
  };
}
