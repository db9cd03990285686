// Path containment for callers that need a host path string (the terminal's cwd=, test probes): the path is
// walked by descriptor (fd-walk.ts) and its canonical form returned. File tools do not use this: a string
// can be re-resolved differently later, so they act on the descriptors walkInsideRoot holds instead.
import { walkInsideRoot, type WalkOptions } from "./fd-walk.js";

export { isInside, toDisplayPath, VIRTUAL_ROOT } from "./path-lexical.js";

export interface ResolvedPath {
  /** Host path with symlinks resolved (for new targets: resolved ancestor + remaining names). */
  absolute: string;
  /** Canonical project root (realpath). */
  root: string;
  /** "/project/..." form shown to agents. */
  display: string;
  exists: boolean;
}

export type ResolveOptions = Pick<WalkOptions, "allowMissing">;

/**
 * `root` is a project's stored root: the canonical realpath taken when the operator approved it.
 * Synchronous on purpose: it runs on every call of every tool that takes a path.
 */
export function resolveInsideRoot(root: string, input: string, options: ResolveOptions = {}): ResolvedPath {
  const target = walkInsideRoot(root, input, options);
  target.close();
  return { absolute: target.absolute, root, display: target.display, exists: target.exists };
}
