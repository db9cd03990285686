// The sandbox containers' options from the parsed configuration (config.ts reads the URLBRIDGE_SANDBOX_*
// variables at start-up, so a malformed one stops the start like every other variable).
// When the bridge itself runs in a container, the engine needs host paths: URLBRIDGE_SANDBOX_HOST_PROJECTS maps
// the bridge's projects folder onto the host's ("/projects=/home/me/code").
import path from "node:path";
import type { Config } from "../../config.js";
import { ErrorCode, ToolError } from "../../errors.js";
import type { ProjectContainersOptions } from "./manager.js";
import type { SandboxLimits } from "./spec.js";

const MIB = 1024 ** 2;

/**
 * A function from the bridge's path of a project root to the engine's (host) path. A root outside `from` has
 * no host path the bridge knows: mounting its bridge path on the host could mount some other folder, so it is
 * refused.
 */
export function mapRootPrefix(from: string, to: string): (root: string) => string {
  const source = path.resolve(from);
  const target = path.resolve(to);
  return (root) => {
    const relative = path.relative(source, path.resolve(root));
    if (relative.startsWith("..") || path.isAbsolute(relative)) {
      throw new ToolError(
        ErrorCode.sandboxUnavailable,
        `This project's folder is outside ${source}, the folder URLBRIDGE_SANDBOX_HOST_PROJECTS maps onto the host; nothing ran. The operator moves the project there or changes the mapping.`,
        {
          detail: { reason: "root_not_mapped" },
          retryable: false,
          agentAction: "stop",
        },
      );
    }
    return path.join(target, relative);
  };
}

export function projectContainersOptionsFromConfig(
  config: Pick<Config, "sandboxContainer" | "agentFallback">,
): ProjectContainersOptions {
  const settings = config.sandboxContainer;
  const limits: Partial<SandboxLimits> = {};
  if (settings.cpus !== undefined) limits.cpus = settings.cpus;
  if (settings.memoryMb !== undefined) limits.memoryBytes = settings.memoryMb * MIB;
  if (settings.pids !== undefined) limits.pids = settings.pids;
  if (settings.tmpMb !== undefined) limits.tmpBytes = settings.tmpMb * MIB;
  return {
    limits,
    network: settings.network,
    instance: settings.instance,
    agentFallback: config.agentFallback,
    ...(settings.image !== undefined ? { image: settings.image } : {}),
    ...(settings.hostProjects !== undefined
      ? { hostPath: mapRootPrefix(settings.hostProjects.from, settings.hostProjects.to) }
      : {}),
  };
}
