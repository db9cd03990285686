// The launcher's filesystem allowlist for one project: system folders read-only, the project and its scratch
// space read-write, a few devices, and never the state dir, the bridge's code or another project, even when
// one of them lies beneath an allowed folder (the folder is then allowed entry by entry around it).
import fs from "node:fs";
import path from "node:path";

/** Read + execute for every command: the toolchain, its libraries and configuration, and /proc (see below). */
export const SYSTEM_READ_ONLY = [
  "/usr",
  "/bin",
  "/lib",
  "/lib32",
  "/lib64",
  "/libx32",
  "/sbin",
  "/etc",
  "/opt",
  "/usr/local",
  "/sys",
];
/** DNS resolution on hosts whose /etc/resolv.conf links into /run. */
export const RESOLVER_DIRS = ["/run/systemd/resolve", "/run/resolvconf"];
/**
 * /proc read-only: tools read /proc/self and /proc/cpuinfo. Landlock's ptrace rule (any ABI) keeps
 * /proc/<pid>/environ, mem and fd of processes outside the command's own sandbox closed even to the same uid.
 */
export const PROC_DIR = "/proc";
export const DEVICES = ["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"];
/** How deep an allowed folder is split around an excluded one before the rest of it is left out (fail closed). */
const MAX_SPLIT_DEPTH = 12;

/**
 * How long the real path of a system folder is reused. Resolving the dozen of them (symlinks such as /bin ->
 * /usr/bin, missing ones such as /lib32) was most of building a plan, on every command; a folder that appears
 * or is relinked is seen within this time.
 */
const SYSTEM_REAL_PATH_TTL_MS = 5000;
const systemRealPaths = new Map<string, { real: string | undefined; at: number }>();

/** realOrUndefined for system folders, reused for SYSTEM_REAL_PATH_TTL_MS. */
function systemRealPath(p: string): string | undefined {
  const now = Date.now();
  const cached = systemRealPaths.get(p);
  if (cached && now - cached.at < SYSTEM_REAL_PATH_TTL_MS) return cached.real;
  // existsSync first: a missing folder would otherwise cost a thrown error.
  const real = fs.existsSync(p) ? realOrUndefined(p) : undefined;
  systemRealPaths.set(p, { real, at: now });
  return real;
}

const beneath = (child: string, parent: string) =>
  child === parent || child.startsWith(parent.endsWith("/") ? parent : `${parent}/`);

function realOrUndefined(p: string): string | undefined {
  try {
    return fs.realpathSync.native(p);
  } catch {
    return undefined;
  }
}

/**
 * `allowed` (a real path) minus every excluded path beneath it: the folder itself when nothing excluded lies
 * inside, else its entries one by one (symlinked entries are left out: a rule follows its link). Entries that
 * are or hold an excluded path are split further; an excluded path equal to `allowed` removes it entirely.
 */
export function allowAround(allowed: string, excluded: string[], depth = 0): string[] {
  const inside = excluded.filter((e) => beneath(e, allowed));
  if (inside.length === 0) return [allowed];
  if (inside.includes(allowed) || depth >= MAX_SPLIT_DEPTH) return [];
  let names: string[];
  try {
    names = fs.readdirSync(allowed);
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const name of names) {
    const entry = path.join(allowed, name);
    let stat: fs.Stats;
    try {
      stat = fs.lstatSync(entry);
    } catch {
      continue;
    }
    if (stat.isSymbolicLink()) continue;
    out.push(...(stat.isDirectory() ? allowAround(entry, inside, depth + 1) : inside.includes(entry) ? [] : [entry]));
  }
  return out;
}

export interface AllowlistInput {
  projectRoot: string;
  scratch: string;
  /** Folders no command may reach: state dir, bridge code, scratch base, other projects. */
  excluded: string[];
  /** Extra read-only folders (node's and ripgrep's installation). */
  extraReadOnly: string[];
  /** The project read-only instead of read-write (the version-control read tools run git so). */
  projectReadOnly?: boolean;
}

export interface Allowlist {
  readOnly: string[];
  readWrite: string[];
  devices: string[];
}

export function buildAllowlist(input: AllowlistInput): Allowlist {
  const excluded = input.excluded.map((p) => realOrUndefined(p) ?? path.resolve(p));
  const project = realOrUndefined(input.projectRoot) ?? input.projectRoot;
  // The project may hold the bridge's own code (developing urlbridge with urlbridge): the operator chose
  // that folder, so only what lies strictly beneath it and is not the project itself stays excluded.
  const projectExcluded = excluded.filter((e) => e !== project && !beneath(project, e));
  const readOnly = new Set<string>();
  for (const dir of [...SYSTEM_READ_ONLY, ...RESOLVER_DIRS, ...input.extraReadOnly]) {
    const real = systemRealPath(dir);
    if (real) for (const p of allowAround(real, excluded)) readOnly.add(p);
  }
  readOnly.add(PROC_DIR);
  const projectPaths = allowAround(project, projectExcluded);
  if (input.projectReadOnly) for (const p of projectPaths) readOnly.add(p);
  return {
    readOnly: [...readOnly],
    readWrite: [...(input.projectReadOnly ? [] : projectPaths), input.scratch],
    devices: DEVICES.filter((d) => fs.existsSync(d)),
  };
}
