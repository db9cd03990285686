// ripgrep opens files by path, so no descriptor walk on our side can make it race-free: a folder swapped for a
// symlink mid-search would be followed by rg's own open(). So rg runs under the sandbox launcher
// (native/urlbridge-sandbox.c) with Landlock read access to the checked target alone, named by its inode
// through /proc/<bridge pid>/fd/<fd>, plus the exact files rg needs to start (binary, loader, libraries). The
// kernel then denies whatever rg reaches outside the target, however the tree changes under it.
import { execFile } from "node:child_process";
import fs from "node:fs";
import { promisify } from "node:util";
import { launcherBinary, probeLauncher } from "../../sandbox/launcher.js";

const run = promisify(execFile);

/** SIGTERM -> SIGKILL grace the launcher gives rg when a search is stopped early. */
const STOP_GRACE_MS = 100;

export interface RipgrepConfinement {
  launcher: string;
  /** Files rg needs read/execute access to in order to start at all. */
  startupFiles: string[];
}

/** The binary, its ELF interpreter and shared libraries (as ldd lists them) and the loader cache. */
async function startupFilesOf(rgPath: string): Promise<string[]> {
  const files = new Set<string>([fs.realpathSync(rgPath)]);
  const { stdout } = await run("ldd", [rgPath], { timeout: 5000 });
  for (const match of stdout.matchAll(/(?:=>\s*)?(\/\S+)\s+\(0x/g)) files.add(fs.realpathSync(match[1]!));
  if (fs.existsSync("/etc/ld.so.cache")) files.add("/etc/ld.so.cache");
  return [...files];
}

/**
 * Whether rg can run confined here: the launcher is built, Landlock's filesystem rules are enforced, and rg's
 * start-up files are known. Undefined otherwise (the engine then prefers the portable search).
 */
export async function probeRipgrepConfinement(rgPath: string): Promise<RipgrepConfinement | undefined> {
  const launcher = launcherBinary();
  if (!launcher || process.platform !== "linux" || probeLauncher()?.fs !== true) return undefined;
  try {
    return { launcher, startupFiles: await startupFilesOf(rgPath) };
  } catch {
    return undefined;
  }
}

/** Launcher arguments that run rg with read access to `allowed` (paths, e.g. /proc/<pid>/fd/<fd>) only. */
export function confinedCommand(
  confinement: RipgrepConfinement,
  rgPath: string,
  rgArgs: string[],
  allowed: string[],
): { command: string; args: string[] } {
  const ro = [...confinement.startupFiles, ...allowed].flatMap((p) => ["--ro", p]);
  return {
    command: confinement.launcher,
    args: ["--require-landlock", "--grace-ms", String(STOP_GRACE_MS), ...ro, "--", rgPath, ...rgArgs],
  };
}

/** A descriptor this process holds, as a path the launcher (our child) can open. */
export function heldFdPath(fd: number): string {
  return `/proc/${process.pid}/fd/${fd}`;
}
