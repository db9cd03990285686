// The sandbox containers' options from the parsed configuration (config.ts reads the URLBRIDGE_SANDBOX_*
// variables at start-up, so a malformed one stops the start like every other variable).
import type { Config } from "../../config.js";
import type { ProjectContainersOptions } from "./manager.js";
import { mapRootPrefix } from "./options.js";
import type { SandboxLimits } from "./spec.js";

const MIB = 1024 ** 2;

export function projectContainersOptionsFromConfig(config: Pick<Config, "sandboxContainer" | "agentFallback">): ProjectContainersOptions {
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
    ...(settings.hostProjects !== undefined ? { hostPath: mapRootPrefix(settings.hostProjects.from, settings.hostProjects.to) } : {}),
  };
}
