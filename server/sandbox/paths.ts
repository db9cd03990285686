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
  if (absolute === root) return VIRTUAL_ROOT;
  // Every resolved path is inside the root, so slicing the prefix is path.relative without its cost.
  const rel = isInside(root, absolute) ? absolute.slice(root.endsWith(path.sep) ? root.length : root.length + 1) : path.relative(root, absolute);
  return `${VIRTUAL_ROOT}/${path.sep === "/" ? rel : rel.split(path.sep).join("/")}`;
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

export interface ResolveOptions {
  /** When false, a missing target is an error (path_not_found). Default true. */
  allowMissing?: boolean;
}

/**
 * Fails unless the stored root is still the directory the operator approved. Only paths that did not
 * resolve cleanly inside the root pay for this check: a target whose realpath lies under the root proves
 * the root is there, and were the root (or an ancestor) now a symlink, that realpath would lie elsewhere.
 */
function assertRootUnchanged(root: string): void {
  const real = realpathOrUndefined(root);
  if (real === undefined || !lstatOrUndefined(real)?.isDirectory()) {
    throw new ToolError(ErrorCode.projectRootMissing, "The project folder no longer exists on the host. Ask the operator to restore it or change the project's root.", {
      retryable: false,
      agentAction: "stop",
    });
  }
  if (real !== root) {
    // The operator approved this canonical directory; if the path now leads elsewhere through a symlink,
    // following it would hand the agent a folder nobody approved.
    throw new ToolError(ErrorCode.projectRootChanged, "The project folder's path now leads somewhere else through a symlink. Ask the operator to save the project's root again.", {
      retryable: false,
      agentAction: "stop",
    });
  }
}

/**
 * `root` is a project's stored root: the canonical realpath taken when the operator approved it.
 * Synchronous on purpose (see lstatOrUndefined): it runs on every call of every tool.
 */
export function resolveInsideRoot(root: string, input: string, options: ResolveOptions = {}): ResolvedPath {
  if (input.length === 0 || input.includes("\0")) {
    throw new ToolError(ErrorCode.invalidPath, "Give a non-empty path without NUL characters, relative to /project.", {
      detail: { path: input },
    });
  }
  const lexical = lexicalTarget(root, input);
  if (!isInside(root, lexical)) throw outside(input);

  const real = realpathOrUndefined(lexical);
  if (real !== undefined && isInside(root, real)) {
    return { absolute: real, root, display: toDisplayPath(root, real), exists: true };
  }
  assertRootUnchanged(root);
  if (real !== undefined) throw escape(input);
  if (options.allowMissing === false) {
    throw new ToolError(ErrorCode.pathNotFound, `"${input}" does not exist. Use /f to find files by name.`, {
      detail: { path: input },
    });
  }
  const absolute = resolveMissing(root, lexical, input);
  return { absolute, root, display: toDisplayPath(root, absolute), exists: false };
}
