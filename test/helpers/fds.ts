// Descriptor facts for the inherited-descriptor tests: whether one of ours lacks close-on-exec, and the numbers a
// command's `ls /proc/self/fd` printed.
import fs from "node:fs";

/** O_CLOEXEC as /proc/<pid>/fdinfo's octal flags show it. */
const O_CLOEXEC = 0o2000000;

/** Whether our descriptor fd would pass to a child through exec (no close-on-exec); false when it is not open. */
export function isInheritable(fd: number): boolean {
  try {
    const flags = /^flags:\s+([0-7]+)$/m.exec(fs.readFileSync(`/proc/self/fdinfo/${fd}`, "utf8"))?.[1];
    return flags !== undefined && (parseInt(flags, 8) & O_CLOEXEC) === 0;
  } catch {
    return false;
  }
}

/** The sorted numbers of `ls /proc/self/fd` output. */
export function commandFds(output: string): number[] {
  return output
    .trim()
    .split("\n")
    .filter(Boolean)
    .map(Number)
    .sort((a, b) => a - b);
}
