// find (/f): which files (and directories) have a name containing some text, contain some text, or match
// a glob. Recursive by default, ignore-aware, bounded, in the same order /g reports.
import { z } from "zod";
import { ErrorCode, ToolError } from "../../errors.js";
import { lstatInDirectory, readFileInDirectory } from "../../sandbox/fd-ops.js";
import { walkInsideRoot } from "../../sandbox/fd-walk.js";
import { VIRTUAL_ROOT } from "../../sandbox/paths.js";
import { createIncludeFilter } from "./include-glob.js";
import {
  DEFAULT_FIND_RESULTS,
  MAX_FIND_CONTENT_BYTES,
  MAX_FIND_RESULTS,
  MAX_FIND_VISITED_ENTRIES,
  MAX_PATTERN_CHARS,
  MAX_SEARCH_FILE_BYTES,
  MAX_SEARCH_MS,
} from "../limits.js";
import { decodeLossy } from "../../text/index.js";
import { defineTool, type ToolContext } from "../tool/definition.js";
import { toRelative, walkTree, type WalkEntry } from "./walk.js";

const text = z.string().min(1).max(MAX_PATTERN_CHARS);

const schema = z.object({
  name: text.optional(),
  query: text.optional(),
  path: z.string().optional(),
  include: z.string().optional(),
  recursive: z.boolean().default(true),
  ignored: z.boolean().default(false),
  ignoreCase: z.boolean().default(false),
  limit: z.number().int().min(1).max(MAX_FIND_RESULTS).default(DEFAULT_FIND_RESULTS),
  /** Resume cursor a truncated answer's next carries: only paths after this one in walk order. */
  after: z.string().min(1).optional(),
  /** path: walk order (default, resumable with next); mtime: newest first (OpenCode's glob), the newest `limit` of every match. */
  sort: z.enum(["path", "mtime"]).default("path"),
});

const findHit = z.strictObject({
  path: z.string().describe("The match in /project/... form."),
  kind: z
    .enum(["file", "dir", "symlink"])
    .describe("What the entry is; a symlink is reported (by a name search only), never followed."),
  size: z.number().int().min(0).optional().describe("Bytes, for files."),
  line: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe("With query=: 1-based line of the first occurrence; read from there with /r offset=."),
});

/** What /f answers. */
export const findOutput = z.strictObject({
  ok: z.literal(true),
  path: z.string().describe("The directory searched, in /project/... form."),
  name: z.string().optional().describe("Echo of name=, when given."),
  query: z.string().optional().describe("Echo of query=, when given."),
  include: z.string().optional().describe("Echo of include=, when given."),
  recursive: z.boolean().describe("Whether subdirectories were searched."),
  count: z.number().int().min(0).describe("Number of results returned."),
  results: z.array(findHit).describe("Matches in path order, the order /g reports; with sort=mtime, newest first."),
  truncated: z
    .boolean()
    .describe("true: the search stopped at a bound (limit=, entries walked, bytes read or time); notice says which."),
  next: z
    .string()
    .optional()
    .describe(
      "Present when truncated: the exact URL that continues the search after the last path considered; fetch it as given.",
    ),
  notice: z
    .string()
    .optional()
    .describe(
      "Present when truncated (which bound, how to narrow) or when nothing matched (ignored paths were skipped; ignored=1 includes them; name= is not a glob).",
    ),
  includeUrl: z
    .string()
    .optional()
    .describe(
      "With no match for a name= that looks like a glob (*, ?, [): the same search with it as include=, which takes globs.",
    ),
});

type FindHit = z.infer<typeof findHit>;

/** Characters that make a name= look like a glob, which it is not (it is text the name contains). */
const GLOB_LOOK = /[*?[]/;

/** Why nothing matched: ignored paths skipped, and a name= that reads like a glob, with the include= URL for it. */
function emptyNotice(args: FindArgs, ctx: ToolContext): Pick<FindOutput, "notice" | "includeUrl"> {
  const notes: string[] = ["Nothing matched."];
  let includeUrl: string | undefined;
  if (args.name !== undefined && args.include === undefined && GLOB_LOOK.test(args.name)) {
    includeUrl = ctx.urls.repair({ drop: ["name"], add: [["include", args.name]] });
    notes.push(
      `name= is text the name must contain, not a glob, so "${args.name}" matches only names with those very characters; include= takes globs${includeUrl ? " (includeUrl runs this search with it)" : ""}.`,
    );
  }
  if (!args.ignored)
    notes.push(".gitignore'd paths, .git and node_modules were skipped; add ignored=1 to include them.");
  return notes.length === 1 ? {} : { notice: notes.join(" "), ...(includeUrl ? { includeUrl } : {}) };
}
type FindArgs = z.infer<typeof schema>;

/** The root-relative form of after=, which may be given as /project/... (as results show it) or relative. */
function cursorOf(after: string | undefined): string | undefined {
  if (after === undefined) return undefined;
  const trimmed = after.startsWith(`${VIRTUAL_ROOT}/`)
    ? after.slice(VIRTUAL_ROOT.length + 1)
    : after.replace(/^\.\//, "");
  // Slashes off both ends by index (/\/+$/ rescans a long run of slashes from each of them).
  let start = 0;
  let end = trimmed.length;
  while (start < end && trimmed[start] === "/") start++;
  while (end > start && trimmed[end - 1] === "/") end--;
  return trimmed.slice(start, end);
}

/** The same search, continued after `cursor` (a root-relative path): every given filter carried on. */
function continueUrl(ctx: ToolContext, args: FindArgs, display: string, cursor: string): string {
  const params: Array<[string, string | number]> = [];
  if (args.name !== undefined) params.push(["name", args.name]);
  if (args.query !== undefined) params.push(["query", args.query]);
  if (args.path !== undefined) params.push(["path", display]);
  if (args.include !== undefined) params.push(["include", args.include]);
  if (!args.recursive) params.push(["recursive", 0]);
  if (args.ignored) params.push(["ignored", 1]);
  if (args.ignoreCase) params.push(["ignoreCase", 1]);
  if (args.limit !== DEFAULT_FIND_RESULTS) params.push(["limit", args.limit]);
  params.push(["after", `${VIRTUAL_ROOT}/${cursor}`]);
  return ctx.urls.to("r", "f", params);
}
export type FindOutput = z.infer<typeof findOutput>;

type StopReason = "results" | "entries" | "bytes" | "time";

const STOP_NOTICES: Record<StopReason, string> = {
  results: "More paths match than limit= allows.",
  entries: `The walk stopped after ${MAX_FIND_VISITED_ENTRIES} entries.`,
  bytes: `query= stopped after reading ${MAX_FIND_CONTENT_BYTES / (1024 * 1024)} MiB of file content.`,
  time: `The search took longer than ${MAX_SEARCH_MS / 1000} s and stopped.`,
};

/** 1-based line of the first occurrence of `needle` in a text file, or undefined. */
function firstLineContaining(textContent: string, needle: string, ignoreCase: boolean): number | undefined {
  const haystack = ignoreCase ? textContent.toLowerCase() : textContent;
  const at = haystack.indexOf(ignoreCase ? needle.toLowerCase() : needle);
  if (at === -1) return undefined;
  // Lower-casing can change lengths but never adds or removes \n, so counting them in the prefix is exact.
  let line = 1;
  for (let i = haystack.indexOf("\n"); i !== -1 && i < at; i = haystack.indexOf("\n", i + 1)) line++;
  return line;
}

export const findTool = defineTool({
  id: "find",
  route: "f",
  longRoutes: ["discover"],
  capability: "read",
  description:
    "Find files and directories by name (name=, case-insensitive), by content (query=) or by glob (include=); recursive, bounded.",
  example: "/f?name=config",
  schema,
  output: findOutput,
  url: { aliases: { dir: "path" } },
  async execute(args, ctx) {
    const include = args.include === undefined ? undefined : createIncludeFilter(args.include);
    const start = walkInsideRoot(ctx.project.root, args.path ?? VIRTUAL_ROOT, { allowMissing: false });
    try {
      if (!start.stats!.isDirectory()) {
        throw new ToolError(
          ErrorCode.notADirectory,
          `${start.display} is a file; /f searches a directory. Read the file with /r or search it with /g.`,
          {
            detail: { path: start.display },
          },
        );
      }
      const nameNeedle = args.name?.toLowerCase();
      const byPath = nameNeedle?.includes("/") ?? false;
      // Directories are results only for a pure name search: include= and query= are about files.
      const directoriesCount = args.query === undefined && include === undefined;
      const deadline = Date.now() + MAX_SEARCH_MS;
      let hits: FindHit[] = [];
      // sort=mtime needs every match before it can keep the newest: limit applies after the walk.
      const byMtime = args.sort === "mtime";
      const modified = new Map<FindHit, number>();
      let visited = 0;
      let contentBytes = 0;
      let stop: StopReason | undefined;

      const walk = walkTree({
        root: start.root,
        rootFd: start.rootFd,
        start: start.absolute,
        startFd: start.fd!,
        recursive: args.recursive,
        includeIgnored: args.ignored,
        signal: ctx.signal,
        after: cursorOf(args.after),
      });
      // The last entry fully considered: where a truncated answer's next resumes.
      let cursor: string | undefined;
      const consider = async (entry: WalkEntry): Promise<FindHit | undefined> => {
        const underStart = toRelative(start.absolute, entry.absolute);
        if (nameNeedle !== undefined && !(byPath ? underStart : entry.name).toLowerCase().includes(nameNeedle))
          return undefined;
        if (entry.kind !== "file")
          return directoriesCount ? { path: `${VIRTUAL_ROOT}/${entry.relative}`, kind: entry.kind } : undefined;
        if (include && !include.matches(underStart, entry.name)) return undefined;
        // By name inside the held directory, never followed: an entry swapped for a symlink is no longer a file.
        const info = lstatInDirectory(entry.dirFd, entry.name);
        if (!info?.isFile()) return undefined;
        const hit: FindHit = { path: `${VIRTUAL_ROOT}/${entry.relative}`, kind: "file", size: info.size };
        if (byMtime) modified.set(hit, info.mtimeMs);
        if (args.query === undefined) return hit;
        if (info.size > MAX_SEARCH_FILE_BYTES) return undefined;
        contentBytes += info.size;
        const bytes = await readFileInDirectory(entry.dirFd, entry.name, MAX_SEARCH_FILE_BYTES).catch(() => undefined);
        const file = decodeLossy(bytes ?? Buffer.alloc(0));
        if (file.kind === "binary") return undefined;
        const line = firstLineContaining(file.utf8.toString("utf8"), args.query, args.ignoreCase);
        return line === undefined ? undefined : { ...hit, line };
      };

      for await (const entry of walk) {
        if (++visited > MAX_FIND_VISITED_ENTRIES) stop = "entries";
        else if (contentBytes > MAX_FIND_CONTENT_BYTES) stop = "bytes";
        else if (Date.now() > deadline) stop = "time";
        if (stop) break;
        const hit = await consider(entry);
        if (hit && hits.length >= args.limit && !byMtime) {
          stop = "results";
          break;
        }
        cursor = entry.relative;
        if (hit) hits.push(hit);
      }
      if (byMtime) {
        // Newest first; equal times in path order (the walk's). A cursor in path order cannot resume this order.
        const order = hits.map((hit, index) => ({ hit, index, at: modified.get(hit) ?? 0 }));
        order.sort((x, y) => y.at - x.at || x.index - y.index);
        if (order.length > args.limit) stop ??= "results";
        hits = order.slice(0, args.limit).map((o) => o.hit);
      }
      // A walk stopped before considering anything has no progress to continue from.
      const next = stop && cursor !== undefined && !byMtime ? continueUrl(ctx, args, start.display, cursor) : undefined;

      return {
        ok: true,
        path: start.display,
        ...(args.name !== undefined ? { name: args.name } : {}),
        ...(args.query !== undefined ? { query: args.query } : {}),
        ...(include ? { include: include.glob } : {}),
        recursive: args.recursive,
        count: hits.length,
        results: hits,
        truncated: stop !== undefined,
        ...(next ? { next } : {}),
        ...(stop
          ? {
              notice: `${STOP_NOTICES[stop]} ${next ? "next continues after the last path considered, or narrow" : "Narrow"} with path=, name=, include= or query=.`,
            }
          : {}),
        ...(hits.length === 0 && !stop ? emptyNotice(args, ctx) : {}),
      };
    } finally {
      start.close();
    }
  },
});
