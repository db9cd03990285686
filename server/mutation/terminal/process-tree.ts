// Finds and ends a terminal command's whole process tree: its process group (we spawn each command as a
// group leader) plus any descendant that moved to a group of its own, SIGTERM first, SIGKILL after a grace.
import fs from "node:fs";

/** Time between SIGTERM and SIGKILL when ending a tree. */
export const KILL_GRACE_MS = 1500;
/** How often liveness is re-checked while waiting for the grace to pass. */
const POLL_MS = 50;

interface ProcInfo {
  pid: number;
  ppid: number;
  pgrp: number;
  state: string;
  /** Clock ticks after boot when the process started: with the pid, an identity that survives pid reuse. */
  startTicks: number;
  /** The foreground process group of the process's controlling terminal; -1 without one. */
  tpgid: number;
}

/** /proc/<pid>/stat: "pid (comm) state ppid pgrp ..."; comm may contain spaces and parentheses. Undefined once gone. */
export function readStat(pid: number): ProcInfo | undefined {
  try {
    const text = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const close = text.lastIndexOf(")");
    const fields = text.slice(close + 2).split(" ");
    return {
      pid,
      state: fields[0]!,
      ppid: Number(fields[1]),
      pgrp: Number(fields[2]),
      tpgid: Number(fields[5]),
      startTicks: Number(fields[19]),
    };
  } catch {
    return undefined;
  }
}

function listProcesses(): ProcInfo[] {
  let names: string[];
  try {
    names = fs.readdirSync("/proc");
  } catch {
    return [];
  }
  const out: ProcInfo[] = [];
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const info = readStat(Number(name));
    if (info) out.push(info);
  }
  return out;
}

/** Whether /proc can be read here (Linux); elsewhere only the process group is signalled. */
export const canInspectProcesses = fs.existsSync("/proc/self/stat");

/** The group's members and every descendant of `pid` (through any group), excluding zombies. */
export function listTree(pid: number): number[] {
  return treeIn(listProcesses(), pid);
}

/** listTree for several roots from one read of /proc (the memory watchdog's pass over every live tree). */
export function listTrees(roots: number[]): Map<number, number[]> {
  const all = listProcesses();
  return new Map(roots.map((root) => [root, treeIn(all, root)]));
}

function treeIn(processes: ProcInfo[], pid: number): number[] {
  const all = processes.filter((p) => p.state !== "Z");
  const children = new Map<number, number[]>();
  for (const p of all) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p.pid]);
  const found = new Set<number>(all.filter((p) => p.pgrp === pid).map((p) => p.pid));
  const stack = [pid, ...found];
  while (stack.length > 0) {
    const next = stack.pop()!;
    for (const child of children.get(next) ?? []) {
      if (!found.has(child)) {
        found.add(child);
        stack.push(child);
      }
    }
  }
  // One read: a leader that exits between two reads of /proc would make the second one undefined.
  const leader = readStat(pid);
  if (leader && leader.state !== "Z") found.add(pid);
  return [...found].sort((a, b) => a - b);
}

/** The process's start time in clock ticks after boot, or undefined when it is gone (or /proc is unavailable). */
export function processStartTicks(pid: number): number | undefined {
  const info = readStat(pid);
  return info && info.state !== "Z" ? info.startTicks : undefined;
}

/** True when the process no longer exists or is a zombie waiting to be reaped (it can no longer run). */
export function isGone(pid: number): boolean {
  if (canInspectProcesses) {
    const info = readStat(pid);
    return info === undefined || info.state === "Z";
  }
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
}

function signalQuietly(target: number, signal: NodeJS.Signals): void {
  try {
    process.kill(target, signal);
  } catch {
    // Already gone, or never ours to signal: either way there is nothing left to do for this id.
  }
}

export interface KillTreeResult {
  /** Processes found in the tree when the kill began. */
  found: number;
  /** Whether any survived SIGTERM and needed SIGKILL. */
  escalated: boolean;
}

/**
 * Ends the process group led by `groupLeader` and every descendant. Descendants are listed before the first
 * signal because a killed parent's children are re-parented and can no longer be traced to it.
 */
export async function killTree(groupLeader: number, graceMs = KILL_GRACE_MS): Promise<KillTreeResult> {
  const members = new Set(listTree(groupLeader));
  signalQuietly(-groupLeader, "SIGTERM");
  for (const pid of members) signalQuietly(pid, "SIGTERM");
  const deadline = Date.now() + graceMs;
  const alive = () => [...members].filter((pid) => !isGone(pid));
  while (alive().length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    for (const pid of listTree(groupLeader)) members.add(pid);
  }
  const survivors = alive();
  if (survivors.length === 0) return { found: members.size, escalated: false };
  signalQuietly(-groupLeader, "SIGKILL");
  for (const pid of survivors) signalQuietly(pid, "SIGKILL");
  return { found: members.size, escalated: true };
}
