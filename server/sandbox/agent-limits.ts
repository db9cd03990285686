// What keeps one agent from taking down the bridge or filling the disk (issue 28), as /api/health and the UI show
// it: the OOM killer's order (agents at oom_score_adj 1000, the bridge as low as it may go), the per-session memory
// budget and how it is enforced, the per-file size limit and the per-session project growth budget.
import fs from "node:fs";
import path from "node:path";
import type { Config } from "../config.js";
import { DEFAULT_SANDBOX_LIMITS } from "./container/spec.js";

/** What the launcher writes to every command's /proc/self/oom_score_adj (native/sandbox/agent-limits.h). */
export const AGENT_OOM_SCORE_ADJ = 1000;
/** What the bridge asks for itself; it gets it only with CAP_SYS_RESOURCE (or compose's oom_score_adj set it before). */
export const BRIDGE_OOM_SCORE_ADJ = -900;

export interface AgentLimitsStatus {
  oom: {
    /** oom_score_adj of agent processes, or null when the launcher does not set it (missing, too old, container mode). */
    agents: number | null;
    /** The bridge's own oom_score_adj now; null without /proc. */
    bridge: number | null;
    /** The bridge is below 0: the kernel ends agents (and anything else) first. */
    bridgeProtected: boolean;
  };
  memory: {
    /** Per session: its processes' resident memory plus what the scratch tmpfs holds; 0 when off. */
    budgetBytes: number;
    /** watchdog: the bridge sums /proc every WATCHDOG_INTERVAL_MS; container: the sandbox container's limit; off. */
    enforcement: "watchdog" | "container" | "off";
    /** A cgroup v2 memory controller the bridge could delegate to agents (detected, reported; not used yet). */
    cgroupDelegated: boolean;
    /** Whether the scratch folder is a tmpfs (memory), whose used bytes then count toward every budget. */
    scratchCounted: boolean;
  };
  /** RLIMIT_FSIZE of agent processes in bytes; 0 when unlimited or not applied. */
  maxFileBytes: number;
  /** Per session: what it may add to its project; 0 when off. */
  growthBudgetBytes: number;
  warning?: string;
}

/** Reads a process's oom_score_adj; undefined without /proc. */
export function readOomScoreAdj(pid: number | "self" = "self"): number | undefined {
  try {
    return Number(fs.readFileSync(`/proc/${pid}/oom_score_adj`, "utf8").trim());
  } catch {
    return undefined;
  }
}

/**
 * Lowers the bridge's own oom_score_adj to BRIDGE_OOM_SCORE_ADJ when it may (CAP_SYS_RESOURCE, or a floor set
 * lower by whoever started it); never raises it. Returns the value it has afterwards.
 */
export function lowerOwnOomScore(target = BRIDGE_OOM_SCORE_ADJ): number | undefined {
  const current = readOomScoreAdj();
  if (current === undefined || current <= target) return current;
  try {
    fs.writeFileSync("/proc/self/oom_score_adj", String(target));
  } catch {
    // EACCES without CAP_SYS_RESOURCE: the status says the bridge is not protected and how to fix it.
  }
  return readOomScoreAdj();
}

const MIB = 1024 * 1024;
const TMPFS_MAGIC = 0x01021994;

/** Whether `dir` (or its nearest existing parent) is on a tmpfs: its pages are memory, not disk. */
export function isOnTmpfs(dir: string): boolean {
  let probe = dir;
  while (!fs.existsSync(probe) && path.dirname(probe) !== probe) probe = path.dirname(probe);
  try {
    return fs.statfsSync(probe).type === TMPFS_MAGIC;
  } catch {
    return false;
  }
}

/** Bytes a tmpfs holding `dir` uses now (all of it: the scratch tmpfs is shared by every project); 0 otherwise. */
export function tmpfsUsedBytes(dir: string): number {
  try {
    const s = fs.statfsSync(dir);
    return s.type === TMPFS_MAGIC ? (s.blocks - s.bfree) * s.bsize : 0;
  } catch {
    return 0;
  }
}

/** A cgroup v2 the bridge could make children in with the memory controller: its own, writable, memory enabled. */
export function detectCgroupDelegation(): boolean {
  try {
    const line = fs
      .readFileSync("/proc/self/cgroup", "utf8")
      .split("\n")
      .find((l) => l.startsWith("0::"));
    if (!line) return false;
    const dir = path.join("/sys/fs/cgroup", line.slice(3));
    const controllers = fs.readFileSync(path.join(dir, "cgroup.controllers"), "utf8").split(/\s+/);
    fs.accessSync(path.join(dir, "cgroup.subtree_control"), fs.constants.W_OK);
    fs.accessSync(path.join(dir, "cgroup.procs"), fs.constants.W_OK);
    return controllers.includes("memory");
  } catch {
    return false;
  }
}

export interface AgentLimitsInputs {
  config: Pick<Config, "agentLimits" | "scratchDir" | "sandbox" | "sandboxContainer">;
  /** The launcher raises oom_score_adj and applies --max-file-size (its probe's agentLimits). */
  launcherApplies: boolean;
  bridgeOomScoreAdj: number | undefined;
}

/** Decided once at start: nothing here changes while the bridge runs. */
export function agentLimitsStatus(inputs: AgentLimitsInputs): AgentLimitsStatus {
  const { config } = inputs;
  const container = config.sandbox === "container";
  const budget = config.agentLimits.memoryBytes;
  const agents = !container && inputs.launcherApplies ? AGENT_OOM_SCORE_ADJ : null;
  const bridge = inputs.bridgeOomScoreAdj ?? null;
  const warnings: string[] = [];
  if (!container && agents === null)
    warnings.push(
      "the sandbox launcher does not raise agents' oom_score_adj (missing or built before; run npm run build:native)",
    );
  if (!container && budget === 0)
    warnings.push("URLBRIDGE_AGENT_MEMORY_MB=0: no memory budget; only the OOM killer's order protects the bridge");
  return {
    oom: { agents, bridge, bridgeProtected: bridge !== null && bridge < 0 },
    memory: {
      budgetBytes: container
        ? (config.sandboxContainer.memoryMb ?? DEFAULT_SANDBOX_LIMITS.memoryBytes / MIB) * MIB
        : budget,
      enforcement: container ? "container" : budget > 0 ? "watchdog" : "off",
      cgroupDelegated: detectCgroupDelegation(),
      scratchCounted: !container && isOnTmpfs(config.scratchDir),
    },
    maxFileBytes: agents === null ? 0 : config.agentLimits.maxFileBytes,
    growthBudgetBytes: config.agentLimits.growthBytes,
    ...(warnings.length > 0 ? { warning: `Agent limits: ${warnings.join("; ")}.` } : {}),
  };
}
