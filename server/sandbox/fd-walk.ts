// Race-free containment: an agent's path is walked from the project root's file descriptor one component at
// a time, each opened O_PATH|O_NOFOLLOW through /proc/self/fd/<dir>/<name> (Node has no openat). A symlink
// inside the root is read and resolved lexically against the real directory holding it, then walked again
// from the root; one that leaves the root is refused. Callers act on the descriptors the walk returns and
// never re-resolve a path string, so a directory swapped for a symlink mid-call is never followed out.
// Synchronous on purpose: each component is an open and a close (~2 µs), and this runs on every call.
import fs from "node:fs";
import path from "node:path";
import { closestPaths } from "./closest-paths.js";
import { closeQuietly, fdPath, O_PATH } from "./proc-fd.js";
import { ErrorCode, ToolError } from "../errors.js";
import {
  componentsBelow,
  controlCharacterName,
  gitLinkRefused,
  hasControlCharacter,
  tooLongToCreate,
  invalidPath,
  isInside,
  lexicalTarget,
  outsideRoot,
  pathChanged,
  pathNotFound,
  rootChanged,
  rootMissing,
  symlinkEscape,
  toDisplayPath,
} from "./path-lexical.js";

// Their home is proc-fd.ts (closest-paths.ts and fd-ops.ts use them below this module); callers keep this name.
export { closeQuietly, fdPath, O_PATH };

const { O_NOFOLLOW, O_DIRECTORY } = fs.constants;
const PATH_FLAGS = O_PATH | O_NOFOLLOW;
const DIR_FLAGS = O_PATH | O_NOFOLLOW | O_DIRECTORY;
/** Symlinks followed in one walk before it is refused as a loop (the kernel's own limit). */
export const MAX_SYMLINK_HOPS = 40;
/** The walk reaches descriptors through /proc/self/fd: Linux only (the appliance, and any Linux host). */
const PROC_FD_AVAILABLE = fs.existsSync("/proc/self/fd");

/** An errno code, or the descriptor. */
function tryOpen(target: string, flags: number): number | string {
  try {
    return fs.openSync(target, flags);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? "EIO";
  }
}

/**
 * Opens the approved root as O_PATH and proves it is still that directory: the root itself must not be a
 * symlink now, and the descriptor's own path (/proc/self/fd) must be the stored canonical root, so a
 * replaced ancestor is caught too. The caller closes the descriptor.
 */
export function openRootFd(root: string): number {
  if (!PROC_FD_AVAILABLE) {
    throw new ToolError(
      ErrorCode.internalError,
      "The bridge's file tools need Linux with /proc mounted (they resolve paths by descriptor through /proc/self/fd). The operator can run the bridge on Linux or in its Docker image.",
      {
        retryable: false,
        agentAction: "stop",
      },
    );
  }
  const fd = tryOpen(root, DIR_FLAGS);
  if (typeof fd !== "number") {
    if (fd === "ENOTDIR") {
      const info = fs.lstatSync(root, { throwIfNoEntry: false });
      if (info?.isSymbolicLink()) throw rootChanged();
    }
    throw rootMissing();
  }
  let real: string | undefined;
  try {
    real = fs.readlinkSync(fdPath(fd));
  } catch {
    real = undefined;
  }
  if (real !== root) {
    closeQuietly(fd);
    throw rootChanged();
  }
  return fd;
}

export interface HeldPath {
  /** Canonical project root. */
  root: string;
  /** O_PATH descriptor of the root, verified by openRootFd. */
  rootFd: number;
  /** Canonical components below the root, symlinks resolved; the missing tail included for a new target. */
  parts: string[];
  /** Host path of the target (for keys and messages only: never opened by this string). */
  absolute: string;
  /** "/project/..." form shown to agents. */
  display: string;
  exists: boolean;
  /** O_PATH descriptor of the target when it exists (rootFd for the root itself). */
  fd: number | undefined;
  /** fstat of `fd`: never a symlink, a final symlink having been followed or refused. */
  stats: fs.Stats | undefined;
  /** O_PATH descriptor of the deepest existing directory on the way: the target's own directory when it exists. */
  dirFd: number;
  /** Names below dirFd that do not exist yet, the target's name last; empty when the target exists. */
  pending: string[];
  /** The target's last component ("" for the root). */
  name: string;
  /** Closes every descriptor this walk holds; safe to call twice. */
  close(): void;
}

/** Longest host path (bytes) a creation may produce: Linux's PATH_MAX less its terminating NUL. */
export const MAX_CREATED_PATH_BYTES = 4095;

export interface WalkOptions {
  /** When false, a missing target is path_not_found. Default true. */
  allowMissing?: boolean;
  /**
   * "inside" (default): symlinks that stay inside the root are followed. "refuse": any symlink on the way is
   * path_changed; for canonical paths recorded earlier (commit, rollback, recovery), which had none.
   */
  symlinks?: "inside" | "refuse";
  /**
   * The caller creates what is missing (/w, apply_patch Add and Move): a missing name with a control character,
   * or a result longer than PATH_MAX, is refused. Rollback and recovery do not set it: they restore what was.
   */
  creating?: boolean;
}

interface WalkState {
  root: string;
  input: string;
  rootFd: number;
  /** False when the root descriptor is a SharedRoot's: the walk's close() leaves it to the SharedRoot. */
  ownsRoot: boolean;
  dir: number;
  canonical: string[];
}

function enter(state: WalkState, fd: number, name: string): void {
  if (state.dir !== state.rootFd) closeQuietly(state.dir);
  state.dir = fd;
  state.canonical.push(name);
}

function held(
  state: WalkState,
  rest: { exists: boolean; fd: number | undefined; stats: fs.Stats | undefined; pending: string[]; name: string },
): HeldPath {
  const parts = rest.exists
    ? rest.name === ""
      ? state.canonical
      : [...state.canonical, rest.name]
    : [...state.canonical, ...rest.pending];
  const absolute = parts.length === 0 ? state.root : path.join(state.root, ...parts);
  const { rootFd, dir, ownsRoot } = state;
  let closed = false;
  return {
    root: state.root,
    rootFd,
    parts,
    absolute,
    display: toDisplayPath(state.root, absolute),
    dirFd: dir,
    ...rest,
    close() {
      if (closed) return;
      closed = true;
      if (rest.fd !== undefined && rest.fd !== dir && rest.fd !== rootFd) closeQuietly(rest.fd);
      if (dir !== rootFd) closeQuietly(dir);
      if (ownsRoot) closeQuietly(rootFd);
    },
  };
}

function errnoError(code: string, where: string, input: string): Error {
  // A component longer than NAME_MAX is the agent's to fix; anything else is the host's and stays internal.
  if (code === "ENAMETOOLONG") return invalidPath(input);
  const error: NodeJS.ErrnoException = new Error(`${code}: cannot open ${where}`);
  error.code = code;
  return error;
}

/** Walks `names` from the root; returns the held target or throws a containment error (closing what it opened). */
function walk(state: WalkState, names: string[], options: WalkOptions): HeldPath {
  let queue = names;
  let hops = 0;
  let i = 0;
  while (i < queue.length) {
    const name = queue[i]!;
    const last = i === queue.length - 1;
    if (!last) {
      // A middle component is nearly always a real directory: one open tells, without an fstat.
      const dirFd = tryOpen(fdPath(state.dir, name), DIR_FLAGS);
      if (typeof dirFd === "number") {
        enter(state, dirFd, name);
        i++;
        continue;
      }
      if (dirFd === "ENOENT") return missing(state, queue.slice(i), options);
      if (dirFd !== "ENOTDIR") throw errnoError(dirFd, name, state.input);
    }
    const fd = tryOpen(fdPath(state.dir, name), PATH_FLAGS);
    if (fd === "ENOENT") return missing(state, queue.slice(i), options);
    if (typeof fd !== "number") throw errnoError(fd, name, state.input);
    let stats: fs.Stats;
    try {
      stats = fs.fstatSync(fd);
    } catch (error) {
      closeQuietly(fd);
      throw error;
    }
    if (state.canonical.length === 0 && name === ".git" && stats.isFile()) {
      closeQuietly(fd);
      throw gitLinkRefused(state.input);
    }
    if (stats.isSymbolicLink()) {
      closeQuietly(fd);
      if (options.symlinks === "refuse") throw pathChanged(state.input);
      if (++hops > MAX_SYMLINK_HOPS) throw symlinkEscape(state.input);
      let text: string;
      try {
        // By name in the held directory: if the link was swapped since the open, what is read is whatever
        // link is there now, and it is contained like any other; a non-link answers EINVAL.
        text = fs.readlinkSync(fdPath(state.dir, name));
      } catch {
        throw pathChanged(state.input);
      }
      const hostTarget = path.resolve(path.join(state.root, ...state.canonical), text);
      if (!isInside(state.root, hostTarget)) throw symlinkEscape(state.input);
      queue = [...componentsBelow(state.root, hostTarget), ...queue.slice(i + 1)];
      i = 0;
      if (state.dir !== state.rootFd) closeQuietly(state.dir);
      state.dir = state.rootFd;
      state.canonical = [];
      continue;
    }
    if (last) return held(state, { exists: true, fd, stats, pending: [], name });
    if (stats.isDirectory()) {
      // Replaced by a directory between the two opens: as good as the first answer.
      enter(state, fd, name);
      i++;
      continue;
    }
    // A file where a directory is needed: nothing can exist below it.
    closeQuietly(fd);
    return missing(state, queue.slice(i), options);
  }
  return held(state, {
    exists: true,
    fd: state.dir,
    stats: fs.fstatSync(state.dir),
    pending: [],
    name: state.canonical.at(-1) ?? "",
  });
}

function missing(state: WalkState, pending: string[], options: WalkOptions): HeldPath {
  if (options.allowMissing === false) {
    const dirDisplay = toDisplayPath(
      state.root,
      state.canonical.length === 0 ? state.root : path.join(state.root, ...state.canonical),
    );
    throw pathNotFound(state.input, closestPaths(state.dir, dirDisplay, pending));
  }
  if (options.creating) assertCreatable(state, pending);
  return held(state, { exists: false, fd: undefined, stats: undefined, pending, name: pending.at(-1)! });
}

/** Names a tool must never create; existing ones with control characters stay readable (issue 17). */
function assertCreatable(state: WalkState, pending: string[]): void {
  const bad = pending.find(hasControlCharacter);
  if (bad !== undefined) throw controlCharacterName(state.input, bad);
  // Nothing is created whose host path other programs could not open (PATH_MAX): the walk itself could, by
  // descriptor, but the agent's own commands, git and editors go by path.
  const length =
    Buffer.byteLength(state.root) +
    [...state.canonical, ...pending].reduce((n, part) => n + 1 + Buffer.byteLength(part), 0);
  if (length > MAX_CREATED_PATH_BYTES) throw tooLongToCreate(state.input, MAX_CREATED_PATH_BYTES);
}

/**
 * One verified root descriptor for the several walks of one synchronous call (/r of up to N paths): opened
 * and proven by openRootFd on the first walk that needs it, as walkInsideRoot would, and held until close().
 * Each walk still starts from a descriptor verified in this call and never re-resolves the root's path, so
 * only the repeated open/readlink/close of the same root within microseconds of each other goes. An open that
 * fails is not kept: the next walk tries again and fails the same way, as it would on its own.
 */
export interface SharedRoot {
  readonly root: string;
  /** The verified root descriptor, opened on first use; owned by this SharedRoot. */
  fd(): number;
  /** Closes the descriptor if one was opened; safe to call twice. Walks from it must be closed first. */
  close(): void;
}

export function shareRoot(root: string): SharedRoot {
  let rootFd: number | undefined;
  return {
    root,
    fd: () => (rootFd ??= openRootFd(root)),
    close() {
      if (rootFd !== undefined) closeQuietly(rootFd);
      rootFd = undefined;
    },
  };
}

/**
 * Resolves an agent's path inside `root` (the project's stored canonical root, or a SharedRoot of it for the
 * walks of one call) and holds it by descriptor. The caller must close() the result, in a finally.
 */
export function walkInsideRoot(root: string | SharedRoot, input: string, options: WalkOptions = {}): HeldPath {
  const shared = typeof root === "string" ? undefined : root;
  const rootPath = shared ? shared.root : (root as string);
  if (input.length === 0 || input.includes("\0")) throw invalidPath(input);
  const lexical = lexicalTarget(rootPath, input);
  if (!isInside(rootPath, lexical)) throw outsideRoot(input);
  const rootFd = shared ? shared.fd() : openRootFd(rootPath);
  const state: WalkState = { root: rootPath, input, rootFd, ownsRoot: !shared, dir: rootFd, canonical: [] };
  try {
    return walk(state, componentsBelow(rootPath, lexical), options);
  } catch (error) {
    if (state.dir !== rootFd) closeQuietly(state.dir);
    if (!shared) closeQuietly(rootFd);
    throw error;
  }
}

/** Runs `use` on a held path and closes it afterwards, whatever happens. */
export function withHeldPath<T>(root: string, input: string, options: WalkOptions, use: (target: HeldPath) => T): T {
  const target = walkInsideRoot(root, input, options);
  try {
    return use(target);
  } finally {
    target.close();
  }
}

/** Async counterpart of withHeldPath: the descriptors stay open until the promise settles. */
export async function withHeldPathAsync<T>(
  root: string,
  input: string,
  options: WalkOptions,
  use: (target: HeldPath) => Promise<T>,
): Promise<T> {
  const target = walkInsideRoot(root, input, options);
  try {
    return await use(target);
  } finally {
    target.close();
  }
}
