// Builds the appliance image and the edge stand-in, and starts containers the way compose.yaml does:
// published ports bound to the host's loopback only, and an init process (compose `init: true`). The appliance
// itself is started through the package's own testcontainers module (testcontainers/), as its users start it.
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import {
  GenericContainer,
  getContainerRuntimeClient,
  ImageName,
  Network,
  type StartedNetwork,
  type StartedTestContainer,
} from "testcontainers";
import { buildImage, imageTag } from "../../../scripts/image-tag.mjs";
import { startUrlbridge, type StartedUrlbridge } from "../../../testcontainers/index.js";

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const EDGE_DIR = path.join(REPO_ROOT, "test", "e2e", "edge-standin");
/**
 * Both images are named by their content (the product's urlbridge:<version>-<hash>, scripts/image-tag.mjs), so
 * two checkouts on one engine never overwrite each other's image and identical content is built once.
 */
export const BRIDGE_IMAGE = imageTag(REPO_ROOT);
export const EDGE_IMAGE = `urlbridge-edge-standin:${createHash("sha256")
  .update(
    fs
      .readdirSync(EDGE_DIR)
      .sort()
      .map((f) => `${f}\0${fs.readFileSync(path.join(EDGE_DIR, f), "utf8")}`)
      .join("\n"),
  )
  .digest("hex")
  .slice(0, 12)}`;

/** The bridge's ports in the image (control published to loopback, data reached only by the edge) and the edge's TLS port. */
export const CONTROL_PORT = 47433;
export const DATA_PORT = 47432;
export const EDGE_TLS_PORT = 8443;

/** Builds the appliance image the way an operator does (`node scripts/image-tag.mjs build`), reusing it when it exists. */
export async function buildBridgeImage(): Promise<void> {
  const { tag } = buildImage(REPO_ROOT);
  if (tag !== BRIDGE_IMAGE)
    throw new Error(`the sources changed while the suite ran: built ${tag}, expected ${BRIDGE_IMAGE}`);
}

export async function buildEdgeImage(): Promise<void> {
  const client = await getContainerRuntimeClient();
  if (await client.image.exists(ImageName.fromString(EDGE_IMAGE))) return;
  await GenericContainer.fromDockerfile(EDGE_DIR).build(EDGE_IMAGE, { deleteOnExit: false });
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
  await Promise.all(containers.map(async (c) => c?.stop({ timeout: 5_000 }).catch(() => undefined)));
}

export interface ApplianceWithEdge {
  network: StartedNetwork;
  bridge: StartedTestContainer;
  /** The same bridge as the testcontainers module hands it out (control client, operator token). */
  urlbridge: StartedUrlbridge;
  edge: StartedTestContainer;
}

/**
 * The appliance as the e2e suites run it: the bridge image (hardened as compose.yaml runs it) with `projectsDir` at
 * /projects, its data plane published nowhere and its tunnel metrics pointed at the edge, and the edge stand-in
 * (`edgeEnv`, e.g. EDGE_SSE) beside it on one private network. Whatever started is stopped again when a later
 * part fails to start.
 */
export async function startApplianceWithEdge(
  projectsDir: string,
  edgeEnv: Record<string, string> = {},
): Promise<ApplianceWithEdge> {
  const network = await new Network().start();
  let bridge: StartedTestContainer | undefined;
  try {
    const urlbridge = await startUrlbridge({
      image: BRIDGE_IMAGE,
      projectsDir,
      dataPlane: false,
      network,
      networkAliases: ["bridge"],
      environment: { URLBRIDGE_TUNNEL_METRICS: "http://edge:2000" },
    });
    bridge = urlbridge.container;
    const edge = await new LoopbackContainer(EDGE_IMAGE)
      .withNetwork(network)
      .withNetworkAliases("edge")
      .withExposedPorts(EDGE_TLS_PORT)
      .withEnvironment(edgeEnv)
      .withStartupTimeout(60_000)
      .start();
    return { network, bridge, urlbridge, edge };
  } catch (error) {
    await stopAll([bridge]);
    await network.stop().catch(() => undefined);
    throw error;
  }
}

/** The edge stand-in's self-signed certificate, for clients that verify TLS. */
export async function edgeCertificate(edge: StartedTestContainer): Promise<string> {
  return (await edge.exec(["cat", "/etc/edge/edge.crt"])).output;
}

/**
 * A name for a container or volume a test creates: urlbridge-<run>-<what>-<pid>. URLBRIDGE_E2E_RUN (default "e2e")
 * tells apart runs that share one engine, so each removes only its own.
 */
export function e2eName(what: string): string {
  return `urlbridge-${process.env.URLBRIDGE_E2E_RUN ?? "e2e"}-${what}-${process.pid}`;
}
