// One grep search as every engine receives it (ripgrep, the portable engine, the large-file stream): the checked
// target's descriptors, the pattern, the filters and the deadline. Its own module so the engines need not import
// the module that chooses between them.
import type { ExactUrls } from "../tool/definition.js";
import type { IncludeFilter } from "./include-glob.js";
import type { SearchPattern } from "./search-pattern.js";

export interface GrepSearch {
  /** Canonical project root. */
  root: string;
  /** O_PATH descriptor of the root, verified by the containment walk. */
  rootFd: number;
  /** Canonical file or directory to search (for relative paths only: it is reached through targetFd). */
  target: string;
  /** O_PATH descriptor of the target, held for the whole search. */
  targetFd: number;
  /** O_PATH descriptor of the directory holding the target (the root's for the root). */
  targetDirFd: number;
  targetKind: "file" | "dir";
  pattern: SearchPattern;
  include: IncludeFilter | undefined;
  includeIgnored: boolean;
  /** Date.now() value after which the search stops and reports what it has. */
  deadline: number;
  signal: AbortSignal;
  urls?: ExactUrls;
}
