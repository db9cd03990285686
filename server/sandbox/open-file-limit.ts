// The bridge's own open-file limit (RLIMIT_NOFILE), for work that holds many descriptors at once. Node raises the
// soft limit to the hard one at start-up, so the soft figure here is what the process can really open; an operator
// lowers or raises it with `ulimit -n`, systemd's LimitNOFILE or compose's `ulimits: nofile`.
import fs from "node:fs";

/** The process's soft open-file limit, or undefined where it cannot be read (unlimited, no /proc). */
export function openFileLimit(): number | undefined {
  return parseOpenFileLimit(readLimits());
}

/** The soft open-file limit a /proc/<pid>/limits text gives (undefined: no such text, or unlimited). */
export function parseOpenFileLimit(limitsText: string | undefined): number | undefined {
  const line = limitsText?.split("\n").find((l) => l.startsWith("Max open files"));
  const soft = line?.slice("Max open files".length).trim().split(/\s+/)[0];
  if (soft === undefined || !/^\d+$/.test(soft)) return undefined;
  return Number(soft);
}

function readLimits(): string | undefined {
  try {
    return fs.readFileSync("/proc/self/limits", "utf8");
  } catch {
    return undefined;
  }
}
