// Path containment: every agent-supplied path is resolved against the project root and must stay inside it,
// by realpath for existing targets and by the nearest existing ancestor's realpath for new ones.
import fs from "node:fs";
import path from "node:path";
import { ErrorCode, ToolError } from "../errors.js";

/** The virtual mount point agents see; results never show the host path. */
export const VIRTUAL_ROOT = "/project";

export interface ResolvedPath {
  /** Host path with symlinks resolved (for new targets: resolved ancestor + remaining names). */
  absolute: string;
  /** Canonical project root (realpath). */
  root: string;
  /** "/project/..." form shown to agents. */
  display: string;
  exists: boolean;
}

export function isInside(root: string, candidate: string): boolean {
  if (candidate === root) return true;
  const withSep = root.endsWith(path.sep) ? root : root + path.sep;
  return candidate.startsWith(withSep);
}

export function toDisplayPath(root: string, absolute: string): string {
  const rel = path.relative(root, absolute);
  if (rel === "") return VIRTUAL_ROOT;
  return `${VIRTUAL_ROOT}/${rel.split(path.sep).join("/")}`;
}

/** Maps the agent's spelling (relative, /project/..., or a native absolute path) to a lexical host path. */
function lexicalTarget(root: string, input: string): string {
  if (input === VIRTUAL_ROOT || input.startsWith(`${VIRTUAL_ROOT}/`)) {
    return path.resolve(root, `.${input.slice(VIRTUAL_ROOT.length)}`);
  }
  if (path.isAbsolute(input)) return path.resolve(input);
  return path.resolve(root, input);
}

// Synchronous on purpose: each call is a few microseconds on a local disk, while the promise versions
// cost a thread-pool round trip (~100 µs here) and containment runs on every call of every tool.
function lstatOrUndefined(p: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(p);
  } catch {
    // ENOENT, and also ENOTDIR when an ancestor is a file: either way there is nothing here.
    return undefined;
  }
}

function realpathOrUndefined(p: string): string | undefined {
  try {
    return fs.realpathSync.native(p);
  } catch {
    return undefined;
  }
}

function outside(input: string): ToolError {
  return new ToolError(ErrorCode.pathOutsideRoot, `"${input}" is outside the project. Use a path relative to ${VIRTUAL_ROOT}.`, {
    detail: { path: input },
  });
}

function escape(input: string): ToolError {
  return new ToolError(ErrorCode.symlinkEscape, `"${input}" resolves through a symlink to a place outside the project; it cannot be used.`, {
    detail: { path: input },
    retryable: false,
  });
}

/** Resolves a path whose final component may not exist yet, following symlinks of existing ancestors. */
function resolveMissing(realRoot: string, lexical: string, input: string, depth = 0): string {
  if (depth > 40) throw escape(input);
  const link = lstatOrUndefined(lexical);
  if (link?.isSymbolicLink()) {
    // A dangling symlink: writing through it would create its target, so contain the target instead.
    const target = path.resolve(path.dirname(lexical), fs.readlinkSync(lexical));
    return resolveMissing(realRoot, target, input, depth + 1);
  }
  const rest: string[] = [];
  let ancestor = lexical;
  for (;;) {
    const real = realpathOrUndefined(ancestor);
    if (real !== undefined) {
      const absolute = path.join(real, ...rest.reverse());
      if (!isInside(realRoot, absolute)) throw escape(input);
      return absolute;
    }
    const parent = path.dirname(ancestor);
    if (parent === ancestor) throw outside(input);
    rest.push(path.basename(ancestor));
    ancestor = parent;
  }
}

// Roots already seen to be their own realpath (project roots are stored that way). For those one lstat
// replaces a realpath of every component on each call. Safe: if an ancestor later becomes a symlink,
// targets resolve outside the root and are refused (fail closed); if the root goes, lstat says so.
const canonicalRoots = new Set<string>();
const MAX_CACHED_ROOTS = 1024;

function realRootOf(root: string): string | undefined {
  if (canonicalRoots.has(root)) {
    if (lstatOrUndefined(root)?.isDirectory()) return root;
    canonicalRoots.delete(root);
  }
  const real = realpathOrUndefined(root);
  if (real === root) {
    if (canonicalRoots.size >= MAX_CACHED_ROOTS) canonicalRoots.clear();
    canonicalRoots.add(root);
  }
  return real;
}

export interface ResolveOptions {
  /** When false, a missing target is an error (path_not_found). Default true. */
  allowMissing?: boolean;
}

/** `root` is a project's stored root: the canonical realpath taken when the operator approved it. */
export async function resolveInsideRoot(root: string, input: string, options: ResolveOptions = {}): Promise<ResolvedPath> {
  if (input.length === 0 || input.includes("\0")) {
    throw new ToolError(ErrorCode.invalidPath, "Give a non-empty path without NUL characters, relative to /project.", {
      detail: { path: input },
    });
  }
  const realRoot = realRootOf(root);
  if (realRoot === undefined) {
    throw new ToolError(ErrorCode.projectRootMissing, "The project folder no longer exists on the host. Ask the operator to restore it or change the project's root.", {
      retryable: false,
      agentAction: "stop",
    });
  }
  if (realRoot !== root) {
    // The operator approved this canonical directory; if the path now leads elsewhere through a symlink,
    // following it would hand the agent a folder nobody approved.
    throw new ToolError(ErrorCode.projectRootChanged, "The project folder's path now leads somewhere else through a symlink. Ask the operator to save the project's root again.", {
      retryable: false,
      agentAction: "stop",
    });
  }
  const lexical = lexicalTarget(realRoot, input);
  if (!isInside(realRoot, lexical)) throw outside(input);

  const real = realpathOrUndefined(lexical);
  if (real !== undefined) {
    if (!isInside(realRoot, real)) throw escape(input);
    return { absolute: real, root: realRoot, display: toDisplayPath(realRoot, real), exists: true };
  }
  if (options.allowMissing === false) {
    throw new ToolError(ErrorCode.pathNotFound, `"${input}" does not exist. Use /f to find files by name.`, {
      detail: { path: input },
    });
  }
  const absolute = resolveMissing(realRoot, lexical, input);
  return { absolute, root: realRoot, display: toDisplayPath(realRoot, absolute), exists: false };
}
