// Reading a V8 .cpuprofile (node --cpu-prof) written by a bench's bridge: the heaviest functions by self time, the
// inclusive time of named stages, and the event loop's long holds (stretches of samples with no idle between).
import fs from "node:fs";

/** A V8 .cpuprofile's shape, as far as these readers use it. */
export interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
export interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

function load(file: string): Profile {
  return JSON.parse(fs.readFileSync(file, "utf8")) as Profile;
}

/** The top `top` functions by self time, after the inclusive time of the functions named in `inclusive`. */
export function summariseProfile(file: string, inclusive: string[], top: number): string {
  const profile = load(file);
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const byFrame = new Map<string, number>();
  let total = 0;
  for (const node of profile.nodes) {
    const us = self.get(node.id) ?? 0;
    total += us;
    const { functionName, url, lineNumber } = node.callFrame;
    const where = url.replace(/^.*node_modules\//, "").replace(/^file:\/\/.*\/dist\//, "dist/");
    const key = `${functionName || "(anonymous)"} ${where}:${lineNumber + 1}`;
    byFrame.set(key, (byFrame.get(key) ?? 0) + us);
  }
  // Inclusive time of the named functions (a node counts once even when it recurses).
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const inclusiveTime = new Map<string, number>();
  for (const [id, us] of self) {
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const name = byId.get(at)!.callFrame.functionName;
      if (inclusive.includes(name) && !seen.has(name)) {
        seen.add(name);
        inclusiveTime.set(name, (inclusiveTime.get(name) ?? 0) + us);
      }
    }
  }
  const incl = [...inclusiveTime]
    .sort((a, b) => b[1] - a[1])
    .map(
      ([k, us]) =>
        `${(us / 1000).toFixed(1).padStart(8)} ms ${((100 * us) / total).toFixed(1).padStart(5)}%  [inclusive] ${k}`,
    );
  const rows = [...byFrame].sort((a, b) => b[1] - a[1]).slice(0, top);
  return [
    ...incl,
    `total sampled ${(total / 1000).toFixed(0)} ms`,
    ...rows.map(
      ([k, us]) => `${(us / 1000).toFixed(1).padStart(8)} ms ${((100 * us) / total).toFixed(1).padStart(5)}%  ${k}`,
    ),
  ].join("\n");
}

/**
 * The event loop's holds: each stretch of consecutive samples none of which is "(idle)", as its length in ms,
 * longest first. A hold is time no other request could be answered in (the sampler's interval is its resolution).
 */
export function loopHolds(file: string): number[] {
  const profile = load(file);
  const idle = new Set(profile.nodes.filter((n) => n.callFrame.functionName === "(idle)").map((n) => n.id));
  const holds: number[] = [];
  let run = 0;
  profile.samples.forEach((id, i) => {
    const us = profile.timeDeltas[i + 1] ?? 0;
    if (idle.has(id)) {
      if (run > 0) holds.push(run / 1000);
      run = 0;
    } else run += us;
  });
  if (run > 0) holds.push(run / 1000);
  return holds.sort((a, b) => b - a);
}
