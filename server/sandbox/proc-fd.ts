// Descriptors reached through /proc/self/fd: the O_PATH flag, the path naming a descriptor (or a name inside a
// directory descriptor), and a close that ignores a descriptor already gone. Used by the walk and the fd tools.
import fs from "node:fs";

/** Linux's O_PATH (x86_64 and arm64): a descriptor that names a file without opening it. Node passes it through. */
export const O_PATH = 0o10000000;

/** The path that reaches `fd` (or `name` inside directory `fd`) without walking any path string again. */
export function fdPath(fd: number, name?: string): string {
  return name === undefined ? `/proc/self/fd/${fd}` : `/proc/self/fd/${fd}/${name}`;
}

export function closeQuietly(fd: number): void {
  try {
    fs.closeSync(fd);
  } catch {
    // Already closed or never valid: nothing to release.
  }
}
