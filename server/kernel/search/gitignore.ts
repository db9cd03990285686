// .gitignore rules as both search engines apply them: one level per directory that holds a .gitignore,
// deeper levels first, each path matched on its own (per entry, as git and ripgrep walk).
import ignore, { type Ignore } from "ignore";
import { closeQuietly } from "../../sandbox/fd-walk.js";
import { openSubdirectory, readFileInDirectory } from "../../sandbox/fd-ops.js";

export const GITIGNORE = ".gitignore";
/** Directories skipped by find and grep unless ignored=1, whatever .gitignore says. */
export const ALWAYS_SKIPPED_DIRS = [".git", "node_modules"] as const;
/** A .gitignore larger than this is not read (it would be a hostile one). */
export const MAX_GITIGNORE_BYTES = 1024 * 1024;

export interface IgnoreLevel {
  /** Directory of the .gitignore, relative to the project root ("" for the root), "/"-separated. */
  dir: string;
  /** The file's text, for handing the same rules to ripgrep. */
  text: string;
  matcher: Ignore;
}

export function createIgnoreLevel(dir: string, text: string): IgnoreLevel {
  // Case-sensitive like git and ripgrep on Linux; the package defaults to case-insensitive.
  return { dir, text, matcher: ignore({ ignorecase: false }).add(text) };
}

/** The .gitignore of a held directory (`dir` is its root-relative path); never followed if it is a symlink. */
export async function loadIgnoreLevel(dirFd: number, dir: string): Promise<IgnoreLevel | undefined> {
  try {
    const bytes = await readFileInDirectory(dirFd, GITIGNORE, MAX_GITIGNORE_BYTES);
    return bytes === undefined ? undefined : createIgnoreLevel(dir, bytes.toString("utf8"));
  } catch {
    return undefined;
  }
}

function relativeTo(level: IgnoreLevel, rel: string): string {
  return level.dir === "" ? rel : rel.slice(level.dir.length + 1);
}

function parentOf(rel: string): string {
  const cut = rel.lastIndexOf("/");
  return cut === -1 ? "" : rel.slice(0, cut);
}

/**
 * Whether `rel` (relative to the root, inside every level's directory) is ignored. The deepest level with
 * an opinion wins. The package also applies a level's rules to the path's parent directories; a result
 * that only comes from such a parent is not this entry's own match, so it is treated as no opinion
 * (the walk only reaches entries whose parents were kept).
 */
export function isIgnored(levels: IgnoreLevel[], rel: string, isDir: boolean): boolean {
  for (let i = levels.length - 1; i >= 0; i--) {
    const level = levels[i]!;
    const own = relativeTo(level, rel);
    const result = level.matcher.test(isDir ? `${own}/` : own);
    if (result.unignored) return false;
    if (!result.ignored) continue;
    const parent = parentOf(own);
    if (parent !== "" && level.matcher.test(`${parent}/`).ignored) continue;
    return true;
  }
  return false;
}

/**
 * The .gitignore levels from the project root down to the parent of `start`, as they apply inside
 * `start`. A level that ignores `start` itself (or a directory between) is left out: naming an ignored
 * directory in path= means searching it, and only the .gitignore files inside it then apply.
 */
export async function ancestorIgnoreLevels(rootFd: number, startRel: string): Promise<IgnoreLevel[]> {
  if (startRel === "") return [];
  const parts = startRel.split("/");
  const levels: IgnoreLevel[] = [];
  // Down the canonical path by descriptor; a directory replaced meanwhile ends the rules found so far.
  let dirFd = rootFd;
  try {
    for (let depth = 0; depth < parts.length; depth++) {
      if (depth > 0) {
        const next = openSubdirectory(dirFd, parts[depth - 1]!);
        if (next === undefined) break;
        if (dirFd !== rootFd) closeQuietly(dirFd);
        dirFd = next;
      }
      const level = await loadIgnoreLevel(dirFd, parts.slice(0, depth).join("/"));
      if (!level) continue;
      let excludes = false;
      for (let d = depth + 1; d <= parts.length && !excludes; d++) {
        if (isIgnored([level], parts.slice(0, d).join("/"), true)) excludes = true;
      }
      if (!excludes) levels.push(level);
    }
  } finally {
    if (dirFd !== rootFd) closeQuietly(dirFd);
  }
  return levels;
}

/** Escapes glob metacharacters in a literal directory path for a gitignore pattern. */
function escapeGlobPath(dir: string): string {
  return dir.replace(/[\\*?[\]!#]/g, (c) => `\\${c}`);
}

/**
 * A line without its trailing whitespace, except one escaped by a backslash (git keeps "foo\\ "): what
 * `/(?<!\\)\s+$/` removes, found in one backward scan (that expression is quadratic in a run of whitespace
 * that does not end the line, and a hostile .gitignore may hold a 1 MiB one).
 */
function withoutTrailingSpace(line: string): string {
  let start = line.length;
  while (start > 0 && /\s/.test(line[start - 1]!)) start--;
  if (start === line.length) return line;
  if (start > 0 && line[start - 1] === "\\") start++;
  return line.slice(0, start);
}

/**
 * Rewrites one .gitignore line from directory `dir` so that it means the same thing when read from the
 * project root: anchored patterns get the directory as prefix, unanchored ones match below it at any depth.
 */
export function rebaseGitignoreLine(line: string, dir: string): string | undefined {
  let text = withoutTrailingSpace(line);
  if (text === "" || text.startsWith("#")) return undefined;
  if (dir === "") return text;
  let negated = "";
  if (text.startsWith("!")) {
    negated = "!";
    text = text.slice(1);
  }
  const dirOnly = text.endsWith("/") && !text.endsWith("\\/");
  const body = dirOnly ? text.slice(0, -1) : text;
  if (body === "") return undefined;
  const prefix = `/${escapeGlobPath(dir)}/`;
  const anchored = body.includes("/");
  return `${negated}${prefix}${anchored ? body.replace(/^\//, "") : `**/${body}`}${dirOnly ? "/" : ""}`;
}

/** All levels' rules as one root-relative ignore file, shallowest first so deeper rules win. */
export function rebaseLevels(levels: IgnoreLevel[]): string {
  const out: string[] = [];
  for (const level of levels) {
    for (const line of level.text.split(/\r?\n/)) {
      const rebased = rebaseGitignoreLine(line, level.dir);
      if (rebased !== undefined) out.push(rebased);
    }
  }
  return out.join("\n") + "\n";
}
