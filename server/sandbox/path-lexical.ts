// The string side of containment: how an agent's spelling maps to a lexical host path, how a host path is
// shown (/project/...), and the errors every containment check raises. No file system access here.
import path from "node:path";
import { ErrorCode, ToolError } from "../errors.js";

/** The virtual mount point agents see; results never show the host path. */
export const VIRTUAL_ROOT = "/project";

export function isInside(root: string, candidate: string): boolean {
  if (candidate === root) return true;
  const withSep = root.endsWith(path.sep) ? root : root + path.sep;
  return candidate.startsWith(withSep);
}

export function toDisplayPath(root: string, absolute: string): string {
  if (absolute === root) return VIRTUAL_ROOT;
  // Every resolved path is inside the root, so slicing the prefix is path.relative without its cost.
  const rel = isInside(root, absolute)
    ? absolute.slice(root.endsWith(path.sep) ? root.length : root.length + 1)
    : path.relative(root, absolute);
  return `${VIRTUAL_ROOT}/${path.sep === "/" ? rel : rel.split(path.sep).join("/")}`;
}

/** Maps the agent's spelling (relative, /project/..., or a native absolute path) to a lexical host path. */
export function lexicalTarget(root: string, input: string): string {
  if (input === VIRTUAL_ROOT || input.startsWith(`${VIRTUAL_ROOT}/`)) {
    return path.resolve(root, `.${input.slice(VIRTUAL_ROOT.length)}`);
  }
  if (path.isAbsolute(input)) return path.resolve(input);
  return path.resolve(root, input);
}

/** Components of a lexical host path below the root ("" is the root itself: no components). */
export function componentsBelow(root: string, lexical: string): string[] {
  if (lexical === root) return [];
  return lexical
    .slice(root.endsWith(path.sep) ? root.length : root.length + 1)
    .split(path.sep)
    .filter((c) => c !== "");
}

export function invalidPath(input: string): ToolError {
  return new ToolError(
    ErrorCode.invalidPath,
    "Give a non-empty path without NUL characters, each name at most 255 bytes, relative to /project.",
    {
      detail: { path: input },
    },
  );
}

/** C0 controls and DEL: legal in Linux names, but a newline or tab in a file name breaks every line-based tool. */
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

export function hasControlCharacter(name: string): boolean {
  return CONTROL_CHARACTER.test(name);
}

/** A name that does not exist yet and would be created with a control character in it. */
export function controlCharacterName(input: string, name: string): ToolError {
  return new ToolError(
    ErrorCode.invalidPath,
    `"${JSON.stringify(name).slice(1, -1)}" in "${JSON.stringify(input).slice(1, -1)}" has a control character (newline, tab, ...); names like that are not created. Check the path: a ~n or ~t may have slipped into it.`,
    {
      detail: { path: input, name },
      retryable: false,
    },
  );
}

/** A creation whose host path would pass PATH_MAX: refused before any directory is made. */
export function tooLongToCreate(input: string, limit: number): ToolError {
  return new ToolError(
    ErrorCode.invalidPath,
    `"${input.length > 80 ? `${input.slice(0, 80)}…` : input}" would be longer than ${limit} bytes on the host, which commands, git and editors cannot open; nothing was created. Use a shorter path.`,
    {
      detail: { path: input.slice(0, 200), limitBytes: limit },
      retryable: false,
    },
  );
}

export function outsideRoot(input: string): ToolError {
  return new ToolError(
    ErrorCode.pathOutsideRoot,
    `"${input}" is outside the project. Use a path relative to ${VIRTUAL_ROOT}.`,
    {
      detail: { path: input },
    },
  );
}

/**
 * The root's `.git` FILE of a linked worktree (a worktree session's root, issue 31) names the main repository's
 * metadata, a host path outside the project: file tools neither read, replace nor remove it (docs/SECURITY.md).
 */
export function gitLinkRefused(input: string): ToolError {
  return new ToolError(
    ErrorCode.pathOutsideRoot,
    `"${input}" is this worktree's link to the repository's metadata, which is outside the project; file tools do not open it. Use the version-control tool (/v: status, diff, log, show, refs) instead.`,
    { detail: { path: input } },
  );
}

export function symlinkEscape(input: string): ToolError {
  return new ToolError(
    ErrorCode.symlinkEscape,
    `"${input}" resolves through a symlink to a place outside the project; it cannot be used.`,
    {
      detail: { path: input },
      retryable: false,
    },
  );
}

/** `closest`: existing paths that differ in the first missing component (sandbox/closest-paths.ts). */
export function pathNotFound(input: string, closest: readonly string[] = []): ToolError {
  const message =
    closest.length > 0
      ? `"${input}" does not exist. Closest existing: ${closest.join(", ")} (see closest). Use /f to find files by name.`
      : `"${input}" does not exist. Use /f to find files by name.`;
  return new ToolError(ErrorCode.pathNotFound, message, {
    detail: { path: input },
    ...(closest.length > 0 ? { extra: { closest: [...closest] } } : {}),
  });
}

export function pathChanged(input: string): ToolError {
  return new ToolError(
    ErrorCode.pathChanged,
    `"${input}" changed while this call was using it (a folder or link on the way was replaced). Nothing outside the project was touched; fetch the same URL again.`,
    { detail: { path: input }, retryable: true, agentAction: "wait_and_retry" },
  );
}

export function rootMissing(): ToolError {
  return new ToolError(
    ErrorCode.projectRootMissing,
    "The project folder no longer exists on the host. Ask the operator to restore it or change the project's root.",
    {
      retryable: false,
      agentAction: "stop",
    },
  );
}

export function rootChanged(): ToolError {
  // The operator approved this canonical directory; if the path now leads elsewhere through a symlink,
  // following it would hand the agent a folder nobody approved.
  return new ToolError(
    ErrorCode.projectRootChanged,
    "The project folder's path now leads somewhere else through a symlink. Ask the operator to save the project's root again.",
    {
      retryable: false,
      agentAction: "stop",
    },
  );
}
