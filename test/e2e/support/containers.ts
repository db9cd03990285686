// Builds the appliance image and the edge stand-in, and starts containers the way compose.yaml does:
// published ports bound to the host's loopback only, and an init process (compose `init: true`).
import path from "node:path";
import { fileURLToPath } from "node:url";
import { GenericContainer, getContainerRuntimeClient, type StartedTestContainer } from "testcontainers";

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
export const BRIDGE_IMAGE = "urlbridge:e2e";
export const EDGE_IMAGE = "urlbridge-edge-standin:e2e";

/** Builds the image from the repository's Dockerfile (classic builder; layers are cached between runs). */
export async function buildBridgeImage(): Promise<GenericContainer> {
  return GenericContainer.fromDockerfile(REPO_ROOT).build(BRIDGE_IMAGE, { deleteOnExit: false });
}

export async function buildEdgeImage(): Promise<GenericContainer> {
  return GenericContainer.fromDockerfile(path.join(REPO_ROOT, "test", "e2e", "edge-standin")).build(EDGE_IMAGE, { deleteOnExit: false });
}

/** A container whose published ports listen on 127.0.0.1 only, with an init as PID 1, like compose.yaml. */
export class LoopbackContainer extends GenericContainer {
  protected override async beforeContainerCreated(): Promise<void> {
    for (const bindings of Object.values(this.hostConfig.PortBindings ?? {}) as Array<Array<{ HostIp?: string }>>) {
      for (const binding of bindings) binding.HostIp = "127.0.0.1";
    }
    this.hostConfig.Init = true;
  }
}

export interface PortView {
  /** HostConfig.PortBindings: what was asked to be published. */
  requested: Record<string, Array<{ HostIp?: string; HostPort?: string }> | null>;
  /** NetworkSettings.Ports: container port → host bindings (null when exposed but not published). */
  published: Record<string, Array<{ HostIp: string; HostPort: string }> | null>;
  exposed: string[];
}

export async function inspectPorts(container: StartedTestContainer): Promise<PortView> {
  const client = await getContainerRuntimeClient();
  const info = await client.container.inspect(client.container.getById(container.getId()));
  return {
    requested: (info.HostConfig.PortBindings ?? {}) as PortView["requested"],
    published: (info.NetworkSettings.Ports ?? {}) as PortView["published"],
    exposed: Object.keys(info.Config.ExposedPorts ?? {}).sort(),
  };
}

/** Stops whatever was started, ignoring what already stopped; no reaper runs offline. */
export async function stopAll(containers: Array<StartedTestContainer | undefined>): Promise<void> {
  await Promise.all(containers.map((c) => c?.stop({ timeout: 5_000 }).catch(() => undefined)));
}
