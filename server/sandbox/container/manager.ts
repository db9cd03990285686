// One warm, reused sandbox container per project root (URLBRIDGE_SANDBOX=container): the project folder's, and each
// worktree session's own (issue 31), so sessions of one project in different roots never replace each other's.
// Created on the root's first command, started again when found stopped, replaced when its settings changed,
// removed with the project (a worktree's once its folder is gone). Only the bridge talks to the Docker engine;
// nothing of the socket is ever mounted into a sandbox.
import fs from "node:fs";
import path from "node:path";
import { linkedWorktreeCommonDir } from "../git-worktree-link.js";
import type Dockerode from "dockerode";
import { ErrorCode, ToolError } from "../../errors.js";
import { agentIdentity, type Identity } from "../identity.js";
import { runExec, type ContainerExecResult } from "./exec.js";
import { sandboxError } from "./sandbox-error.js";
import { openTtyExec, type TtyExec } from "./tty-exec.js";
import {
  CONTAINER_PROJECT_PATH,
  DEFAULT_SANDBOX_IMAGE,
  DEFAULT_SANDBOX_LIMITS,
  LABEL_INSTANCE,
  LABEL_PROJECT,
  LABEL_ROLE,
  LABEL_ROOT,
  LABEL_SPEC,
  SANDBOX_ROLE,
  containerCreateOptions,
  specHash,
  type SandboxLimits,
  type SandboxSpec,
} from "./spec.js";

export type { ContainerExecResult } from "./exec.js";
export type { TtyExec } from "./tty-exec.js";

export interface ProjectContainersOptions {
  /** A dockerode client; default: DOCKER_HOST, else /var/run/docker.sock. */
  docker?: Dockerode;
  /** Default node:20-bookworm-slim. Needs sh and coreutils `timeout`; bash is used when present. */
  image?: string;
  /** "none" (default) or the name of a Docker network the operator allows sandboxes onto ("bridge"). */
  network?: string;
  limits?: Partial<SandboxLimits>;
  /** Who the agent runs as when the project root belongs to root (URLBRIDGE_AGENT_UID/GID; default 1000:1000). */
  agentFallback?: Identity;
  /** The project root as the Docker engine sees it, when the bridge itself runs in a container. */
  hostPath?: (root: string) => string;
  /** Label that tells apart bridges (or test runs) sharing one engine. Default "default". */
  instance?: string;
  /** Grace between the timeout's SIGTERM and SIGKILL. Default 2 s. */
  killAfterMs?: number;
}

export interface ContainerExecRequest {
  projectId: string;
  /** The project root as the bridge sees it (absolute). */
  root: string;
  command: string;
  /** Directory relative to the root ("." by default); it may not climb out. */
  cwd?: string;
  env?: Record<string, string>;
  timeoutMs: number;
  onStdout?: (chunk: Buffer) => void;
  onStderr?: (chunk: Buffer) => void;
  /** Aborting ends the command's process group (the bridge shutting down). */
  signal?: AbortSignal;
}

/** An interactive command (pty=1): it runs until it exits or its processes are ended; no timeout. */
export interface ContainerTtyRequest {
  projectId: string;
  root: string;
  command: string;
  cwd?: string;
  env?: Record<string, string>;
  rows: number;
  cols: number;
}

export interface ProjectContainers {
  /** Runs a command in the project's container, creating or starting it first when needed. */
  exec(request: ContainerExecRequest): Promise<ContainerExecResult>;
  /** Starts a command on a TTY in the project's container (created or started first when needed). */
  openTty(request: ContainerTtyRequest): Promise<TtyExec>;
  /** Makes sure the container of the project's root exists and runs; answers its id. */
  ensure(projectId: string, root: string): Promise<string>;
  /**
   * Ends every process in the container of the project's `root` (every root's when none is named; setsid and daemons
   * included) by restarting it; /tmp is cleared. The project's containers of other roots (its main folder's, its other
   * worktree sessions') keep running. A container whose root folder is gone (a deleted worktree session's) is removed
   * instead.
   */
  endProcesses(projectId: string, root?: string): Promise<boolean>;
  /**
   * Removes the project's containers, or only its `root`'s (a worktree session's, before its folder goes: a container
   * started again on a removed folder would have the engine create it again). Processes end; files stay.
   */
  remove(projectId: string, root?: string): Promise<boolean>;
  /** Removes every sandbox container of this instance. */
  removeAll(): Promise<number>;
}

const DEFAULT_KILL_AFTER_MS = 2_000;
const DEFAULT_FALLBACK: Identity = { uid: 1000, gid: 1000 };

interface Known {
  id: string;
  hash: string;
  user: string;
}

/**
 * A working directory relative to the root, as a path inside the container; never above /project. It must
 * exist as a directory (checked here: Docker's own refusal arrives as output of the command).
 */
function containerWorkingDir(root: string, cwd: string | undefined): string {
  const relative = path.posix.normalize(cwd ?? ".");
  if (path.posix.isAbsolute(relative) || relative === ".." || relative.startsWith("../") || relative.includes("\0")) {
    throw new ToolError(
      ErrorCode.pathOutsideRoot,
      `cwd "${cwd}" is not inside the project; give a directory relative to /project.`,
      { detail: { cwd } },
    );
  }
  const shown = relative === "." ? CONTAINER_PROJECT_PATH : `${CONTAINER_PROJECT_PATH}/${relative}`;
  const stat = fs.statSync(path.join(root, relative), { throwIfNoEntry: false });
  if (stat === undefined)
    throw new ToolError(
      ErrorCode.pathNotFound,
      `cwd ${shown} does not exist; give an existing directory inside /project.`,
      { detail: { cwd: shown } },
    );
  if (!stat.isDirectory())
    throw new ToolError(ErrorCode.notADirectory, `cwd ${shown} is a file; give a directory inside /project.`, {
      detail: { cwd: shown },
    });
  return shown;
}

/** The identity the project's commands run as: the root's owner (or the fallback) when the bridge is root, else the bridge's own; never root. */
function identityFor(root: string, fallback: Identity): Identity {
  let owner: fs.Stats;
  try {
    owner = fs.statSync(root);
  } catch {
    throw new ToolError(
      ErrorCode.projectRootMissing,
      "The project's root folder is missing; nothing ran. The operator restores it or updates the project.",
      { retryable: false, agentAction: "stop" },
    );
  }
  const identity = agentIdentity({ uid: owner.uid, gid: owner.gid }, fallback) ?? {
    uid: process.getuid?.() ?? fallback.uid,
    gid: process.getgid?.() ?? fallback.gid,
  };
  if (identity.uid === 0) {
    throw new ToolError(
      ErrorCode.sandboxUnavailable,
      "Sandbox commands would run as root; nothing ran. The operator sets URLBRIDGE_AGENT_UID to a non-root user.",
      {
        detail: { reason: "root_identity" },
        retryable: false,
        agentAction: "stop",
      },
    );
  }
  return identity;
}

/** Runs a short check command in a fresh container; answers its exit code. */
async function probe(container: Dockerode.Container, user: string, command: string): Promise<number | null> {
  const exec = await container.exec({ Cmd: ["sh", "-c", command], User: user, AttachStdout: true, AttachStderr: true });
  const stream = await exec.start({ hijack: true, stdin: false });
  stream.resume();
  await new Promise((resolve) => {
    stream.on("end", resolve);
    stream.on("close", resolve);
    stream.on("error", resolve);
  });
  return (await exec.inspect()).ExitCode;
}

export function createProjectContainers(options: ProjectContainersOptions = {}): ProjectContainers {
  const image = options.image ?? DEFAULT_SANDBOX_IMAGE;
  const network = options.network ?? "none";
  const limits: SandboxLimits = { ...DEFAULT_SANDBOX_LIMITS, ...options.limits };
  const instance = options.instance ?? "default";
  const fallback = options.agentFallback ?? DEFAULT_FALLBACK;
  const hostPath = options.hostPath ?? ((root: string) => root);
  const killAfterMs = options.killAfterMs ?? DEFAULT_KILL_AFTER_MS;
  const known = new Map<string, Known>();
  const ensuring = new Map<string, Promise<Known>>();
  let client: Dockerode | undefined = options.docker;

  async function docker(): Promise<Dockerode> {
    // Imported on first use: the default sandbox mode never loads dockerode.
    client ??= new (await import("dockerode")).default();
    return client;
  }

  async function listContainers(projectId?: string, root?: string): Promise<Dockerode.ContainerInfo[]> {
    const label = [
      `${LABEL_ROLE}=${SANDBOX_ROLE}`,
      `${LABEL_INSTANCE}=${instance}`,
      ...(projectId !== undefined ? [`${LABEL_PROJECT}=${projectId}`] : []),
      ...(root !== undefined ? [`${LABEL_ROOT}=${root}`] : []),
    ];
    return (await docker()).listContainers({ all: true, filters: { label } });
  }

  /** A container made for a root that no longer exists: a deleted worktree session's, whose mount shows nothing. */
  const rootGone = (info: Dockerode.ContainerInfo) => {
    const root = info.Labels[LABEL_ROOT];
    return root !== undefined && !fs.existsSync(root);
  };

  const keyOf = (projectId: string, root: string) => `${projectId}\0${path.resolve(root)}`;

  function forgetProject(projectId: string): void {
    for (const key of known.keys()) if (key.startsWith(`${projectId}\0`)) known.delete(key);
  }

  function specFor(projectId: string, root: string): SandboxSpec {
    // A linked worktree's git reads the main repository's metadata at the path its .git file names: read-only.
    const common = linkedWorktreeCommonDir(path.resolve(root));
    return {
      projectId,
      root: path.resolve(root),
      hostRoot: hostPath(path.resolve(root)),
      ...(common ? { readOnlyMounts: { [common]: hostPath(common) } } : {}),
      identity: identityFor(root, fallback),
      image,
      network,
      limits,
      instance,
    };
  }

  async function prepare(projectId: string, spec: SandboxSpec, hash: string): Promise<Known> {
    const engine = await docker();
    const user = `${spec.identity.uid}:${spec.identity.gid}`;
    let id: string | undefined;
    for (const info of await listContainers(projectId)) {
      // Another root's container stays (its sessions keep their warm container) unless its folder is gone.
      if (info.Labels[LABEL_ROOT] !== spec.root) {
        if (rootGone(info)) await engine.getContainer(info.Id).remove({ force: true });
      } else if (id === undefined && info.Labels[LABEL_SPEC] === hash) {
        id = info.Id;
        if (info.State !== "running") await engine.getContainer(info.Id).start();
      } else await engine.getContainer(info.Id).remove({ force: true });
    }
    if (id === undefined) {
      const container = await engine.createContainer(containerCreateOptions(spec));
      await container.start();
      if ((await probe(container, user, "command -v timeout >/dev/null")) !== 0) {
        await container.remove({ force: true });
        throw new ToolError(
          ErrorCode.sandboxUnavailable,
          `The sandbox image ${image} has no coreutils timeout, which bounds every command; nothing ran. The operator chooses an image with sh and coreutils.`,
          {
            detail: { reason: "image_unsuitable", image },
            retryable: false,
            agentAction: "stop",
          },
        );
      }
      id = container.id;
    }
    return { id, hash, user };
  }

  async function ensureKnown(projectId: string, root: string): Promise<Known> {
    const spec = specFor(projectId, root);
    const hash = specHash(spec);
    const key = keyOf(projectId, root);
    const cached = known.get(key);
    if (cached?.hash === hash) return cached;
    // One preparation per project at a time: each lists (and may remove) the project's containers.
    for (let flight = ensuring.get(projectId); flight !== undefined; flight = ensuring.get(projectId)) {
      await flight.catch(() => undefined);
      const ready = known.get(key);
      if (ready?.hash === hash) return ready;
    }
    const flight = prepare(projectId, spec, hash)
      .then((ready) => (known.set(key, ready), ready))
      .finally(() => ensuring.delete(projectId));
    ensuring.set(projectId, flight);
    try {
      return await flight;
    } catch (error) {
      throw sandboxError(error, image);
    }
  }

  async function endProcesses(projectId: string, root?: string): Promise<boolean> {
    const engine = await docker();
    const containers = await listContainers(projectId, root === undefined ? undefined : path.resolve(root));
    for (const info of containers) {
      if (rootGone(info)) {
        await engine.getContainer(info.Id).remove({ force: true });
        known.delete(keyOf(projectId, info.Labels[LABEL_ROOT]!));
      }
      // t=0: SIGKILL to the init at once; its end takes every process of the container's pid namespace with it.
      else await engine.getContainer(info.Id).restart({ t: 0 });
    }
    return containers.length > 0;
  }

  /** Runs `run` against the project's container; one removed or stopped behind our back is prepared again, once. */
  async function inContainer<T>(
    projectId: string,
    root: string,
    run: (container: Dockerode.Container, user: string) => Promise<T>,
  ): Promise<T> {
    const attempt = async () => {
      const target = await ensureKnown(projectId, root);
      return run((await docker()).getContainer(target.id), target.user);
    };
    try {
      return await attempt();
    } catch (error) {
      const status = (error as { statusCode?: number }).statusCode;
      // Removed or stopped behind our back (docker rm, an engine restart): prepare it again, once.
      if (status !== 404 && status !== 409) throw sandboxError(error, image);
      known.delete(keyOf(projectId, root));
      try {
        return await attempt();
      } catch (retryError) {
        throw sandboxError(retryError, image);
      }
    }
  }

  return {
    async exec(request) {
      const workingDir = containerWorkingDir(request.root, request.cwd);
      const engine = await docker();
      return inContainer(request.projectId, request.root, (container, user) =>
        runExec({
          container,
          command: request.command,
          workingDir,
          env: request.env ?? {},
          user,
          timeoutMs: request.timeoutMs,
          killAfterMs,
          ...(request.onStdout ? { onStdout: request.onStdout } : {}),
          ...(request.onStderr ? { onStderr: request.onStderr } : {}),
          ...(request.signal ? { signal: request.signal } : {}),
          // The timeout's last resort ends the processes of this command's root only, not its project's other roots.
          endEverything: async () => void (await endProcesses(request.projectId, request.root)),
          demux: (stream, stdout, stderr) => engine.modem.demuxStream(stream, stdout, stderr),
        }),
      );
    },
    async openTty(request) {
      const workingDir = containerWorkingDir(request.root, request.cwd);
      return inContainer(request.projectId, request.root, (container, user) =>
        openTtyExec({
          container,
          command: request.command,
          workingDir,
          env: request.env ?? {},
          user,
          rows: request.rows,
          cols: request.cols,
        }),
      );
    },
    async ensure(projectId, root) {
      return (await ensureKnown(projectId, root)).id;
    },
    endProcesses,
    async remove(projectId, root) {
      if (root === undefined) forgetProject(projectId);
      else known.delete(keyOf(projectId, root));
      const engine = await docker();
      const containers = await listContainers(projectId, root === undefined ? undefined : path.resolve(root));
      for (const info of containers) await engine.getContainer(info.Id).remove({ force: true });
      return containers.length > 0;
    },
    async removeAll() {
      known.clear();
      const engine = await docker();
      const containers = await listContainers();
      for (const info of containers) await engine.getContainer(info.Id).remove({ force: true });
      return containers.length;
    },
  };
}
