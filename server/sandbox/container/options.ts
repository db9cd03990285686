// The sandbox-container settings an operator gives in the environment, read into ProjectContainersOptions.
// When the bridge itself runs in a container, the engine needs host paths: URLBRIDGE_SANDBOX_HOST_PROJECTS maps
// the bridge's projects folder onto the host's ("/projects=/home/me/code").
import path from "node:path";
import { ErrorCode, ToolError } from "../../errors.js";
import type { Identity } from "../identity.js";
import type { ProjectContainersOptions } from "./manager.js";
import type { SandboxLimits } from "./spec.js";

export class SandboxOptionsError extends Error {
  constructor(variable: string, value: string, expected: string) {
    super(`${variable}=${JSON.stringify(value)} is not valid: ${expected}.`);
    this.name = "SandboxOptionsError";
  }
}

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
      throw new ToolError(ErrorCode.sandboxUnavailable, `This project's folder is outside ${source}, the folder URLBRIDGE_SANDBOX_HOST_PROJECTS maps onto the host; nothing ran. The operator moves the project there or changes the mapping.`, {
        detail: { reason: "root_not_mapped" },
        retryable: false,
        agentAction: "stop",
      });
    }
    return path.join(target, relative);
  };
}

function positive(env: Record<string, string | undefined>, variable: string, integer: boolean): number | undefined {
  const value = env[variable];
  if (value === undefined || value === "") return undefined;
  const number = Number(value);
  if (!Number.isFinite(number) || number <= 0 || (integer && !Number.isInteger(number))) {
    throw new SandboxOptionsError(variable, value, integer ? "a positive whole number" : "a positive number");
  }
  return number;
}

/**
 * URLBRIDGE_SANDBOX_IMAGE, _NETWORK ("none" unless set), _CPUS, _MEMORY_MB, _PIDS, _TMP_MB and
 * _HOST_PROJECTS ("<bridge path>=<host path>"); throws SandboxOptionsError naming a malformed one.
 */
export function projectContainersOptionsFromEnv(env: Record<string, string | undefined>, agentFallback?: Identity): ProjectContainersOptions {
  const limits: Partial<SandboxLimits> = {};
  const cpus = positive(env, "URLBRIDGE_SANDBOX_CPUS", false);
  const memoryMb = positive(env, "URLBRIDGE_SANDBOX_MEMORY_MB", true);
  const pids = positive(env, "URLBRIDGE_SANDBOX_PIDS", true);
  const tmpMb = positive(env, "URLBRIDGE_SANDBOX_TMP_MB", true);
  if (cpus !== undefined) limits.cpus = cpus;
  if (memoryMb !== undefined) limits.memoryBytes = memoryMb * 1024 ** 2;
  if (pids !== undefined) limits.pids = pids;
  if (tmpMb !== undefined) limits.tmpBytes = tmpMb * 1024 ** 2;
  const options: ProjectContainersOptions = { limits };
  if (env.URLBRIDGE_SANDBOX_IMAGE) options.image = env.URLBRIDGE_SANDBOX_IMAGE;
  if (env.URLBRIDGE_SANDBOX_NETWORK) options.network = env.URLBRIDGE_SANDBOX_NETWORK;
  if (agentFallback) options.agentFallback = agentFallback;
  const mapping = env.URLBRIDGE_SANDBOX_HOST_PROJECTS;
  if (mapping) {
    const [from, to, extra] = mapping.split("=");
    if (!from || !to || extra !== undefined || !path.isAbsolute(from) || !path.isAbsolute(to)) {
      throw new SandboxOptionsError("URLBRIDGE_SANDBOX_HOST_PROJECTS", mapping, "<absolute path in the bridge>=<absolute path on the host>, e.g. /projects=/home/me/code");
    }
    options.hostPath = mapRootPrefix(from, to);
  }
  return options;
}
