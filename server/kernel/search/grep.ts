// grep (/g): literal-first search of one file or a directory tree, bounded, in path-then-line order.
import { z } from "zod";
import { ErrorCode, ToolError } from "../../errors.js";
import { readHeldFile } from "../../sandbox/fd-ops.js";
import { walkInsideRoot, type HeldPath } from "../../sandbox/fd-walk.js";
import { VIRTUAL_ROOT } from "../../sandbox/paths.js";
import { grepLine, MatchCollector, type GrepStop } from "./grep-collect.js";
import type { GrepEngine } from "./grep-search.js";
import { createIncludeFilter } from "./include-glob.js";
import { DEFAULT_GREP_MATCHES, MAX_GREP_MATCHES, MAX_GREP_OUTPUT_BYTES, MAX_SEARCH_FILE_BYTES, MAX_SEARCH_MS } from "../limits.js";
import { compileSearchPattern } from "./search-pattern.js";
import { decodeLossy, ripgrepSearches } from "../../text/index.js";
import { defineTool, type ToolContext } from "../tool/definition.js";

const schema = z.object({
  pattern: z.string(),
  path: z.string().optional(),
  include: z.string().optional(),
  regex: z.boolean().default(false),
  ignoreCase: z.boolean().default(false),
  ignored: z.boolean().default(false),
  limit: z.number().int().min(1).max(MAX_GREP_MATCHES).default(DEFAULT_GREP_MATCHES),
});

type GrepArgs = z.infer<typeof schema>;

/** What /g answers. */
export const grepOutput = z.strictObject({
  ok: z.literal(true),
  engine: z.enum(["rg", "fallback"]).describe("Which engine searched (ripgrep or the portable one); the answer is the same either way."),
  path: z.string().describe("The file or directory searched, in /project/... form."),
  pattern: z.string().describe("Echo of the pattern searched."),
  regex: z.boolean().describe("false: the pattern was matched literally; true: as a regular expression."),
  ignoreCase: z.literal(true).optional().describe("Present when matching ignored case."),
  include: z.string().optional().describe("Echo of include=, when given."),
  matchedLines: z.number().int().min(0).describe("Matching lines returned, over all files."),
  files: z
    .array(z.strictObject({ path: z.string().describe("The file in /project/... form."), lines: z.array(grepLine).describe("Its matching lines in line order.") }))
    .describe("Files with matches, in path order; files without matches are left out."),
  truncated: z.boolean().describe("true: the search stopped at a bound (limit=, output bytes or time); notice says which and how to narrow."),
  notice: z.string().optional().describe("Present when truncated, or when nothing matched (then it says what was searched and how to widen)."),
  regexUrl: z.string().optional().describe("When nothing matched a pattern that looks like a regex searched literally: exact URL searching it as a regex."),
  ignoredUrl: z.string().optional().describe("When nothing matched in a directory: exact URL searching .gitignore'd paths, .git and node_modules too."),
});

export type GrepOutput = z.infer<typeof grepOutput>;

const STOP_NOTICES: Record<GrepStop, string> = {
  matches: "More lines match than limit= allows.",
  bytes: `The matching lines exceed ${MAX_GREP_OUTPUT_BYTES} bytes of text.`,
  time: `The search took longer than ${MAX_SEARCH_MS / 1000} s and stopped.`,
};

/** Looks like the agent meant a regex but searched literally. */
const REGEX_LOOK = /\\[dwsbDWSB.]|\.\*|\.\+|\[[^\]]+\]|\(\?:|\|/;

async function checkSingleFile(target: HeldPath, display: string, size: number): Promise<void> {
  if (size > MAX_SEARCH_FILE_BYTES) {
    throw new ToolError(ErrorCode.fileTooLarge, `${display} is ${size} bytes; /g searches files up to ${MAX_SEARCH_FILE_BYTES} bytes. Read parts of it with /r offset= and limit=.`, {
      detail: { path: display, size, limit: MAX_SEARCH_FILE_BYTES },
      retryable: false,
    });
  }
  const file = decodeLossy(await readHeldFile(target.fd!, size));
  if (file.kind === "binary") {
    throw new ToolError(ErrorCode.binaryFile, `${display} is a binary file (it contains NUL bytes); /g searches text only. Point path= at a text file or a directory; /t shows this file's size.`, {
      detail: { path: display, size },
      retryable: false,
    });
  }
  // ripgrep takes UTF-32 and BOM-less UTF-16 for binary (their NUL bytes), and both engines answer as it does.
  if (!ripgrepSearches(file.encoding)) {
    throw new ToolError(ErrorCode.binaryFile, `${display} is ${file.encoding} text, which /g skips as binary (ripgrep reads only UTF-8 and BOM-marked UTF-16). Read it with /r, or find a line in it with /f?query=.`, {
      detail: { path: display, size, encoding: file.encoding },
      retryable: false,
    });
  }
}

function hintsWhenEmpty(args: GrepArgs, ctx: ToolContext, targetKind: "file" | "dir"): Pick<GrepOutput, "notice" | "regexUrl" | "ignoredUrl"> {
  const hints: Pick<GrepOutput, "regexUrl" | "ignoredUrl"> = {};
  const notes: string[] = ["No line matches."];
  if (!args.regex && REGEX_LOOK.test(args.pattern)) {
    notes.push("The pattern was searched literally; regexUrl searches it as a regex.");
    const url = ctx.urls.repair({ drop: ["regex"], add: [["regex", "1"]] });
    if (url) hints.regexUrl = url;
  }
  if (!args.ignoreCase) notes.push("Matching is case-sensitive (ignoreCase=1 to change).");
  if (targetKind === "dir" && !args.ignored) {
    notes.push(".gitignore'd paths, .git and node_modules were skipped; ignoredUrl searches them too.");
    const url = ctx.urls.repair({ drop: ["ignored"], add: [["ignored", "1"]] });
    if (url) hints.ignoredUrl = url;
  }
  return { notice: notes.join(" "), ...hints };
}

export function createGrepTool(engine: GrepEngine) {
  return defineTool({
    id: "grep",
    route: "g",
    longRoutes: ["search"],
    capability: "read",
    description: "Search file contents (literal unless regex=1) in one file or a directory; bounded, in path then line order.",
    example: "/g?path=src&raw=TODO",
    schema,
    output: grepOutput,
    url: { aliases: { grep: "pattern", query: "pattern", file: "path" }, rawField: "pattern" },
    async execute(args, ctx) {
      const pattern = compileSearchPattern(args.pattern, { regex: args.regex, ignoreCase: args.ignoreCase, urls: ctx.urls });
      const include = args.include === undefined ? undefined : createIncludeFilter(args.include);
      const target = walkInsideRoot(ctx.project.root, args.path ?? VIRTUAL_ROOT, { allowMissing: false });
      const collector = new MatchCollector({ maxMatches: args.limit, maxBytes: MAX_GREP_OUTPUT_BYTES });
      let used: Awaited<ReturnType<GrepEngine["run"]>>;
      let targetKind: "file" | "dir";
      try {
        const info = target.stats!;
        const kind = info.isDirectory() ? "dir" : info.isFile() ? "file" : undefined;
        if (!kind) {
          throw new ToolError(ErrorCode.notAFile, `${target.display} is neither a file nor a directory (a socket, FIFO or device); give a file or directory in path=.`, {
            detail: { path: target.display },
          });
        }
        targetKind = kind;
        if (kind === "file") await checkSingleFile(target, target.display, info.size);
        used = await engine.run(
          {
            root: target.root,
            rootFd: target.rootFd,
            target: target.absolute,
            targetFd: target.fd!,
            targetDirFd: target.dirFd,
            targetKind: kind,
            pattern,
            include,
            includeIgnored: args.ignored,
            deadline: Date.now() + MAX_SEARCH_MS,
            signal: ctx.signal,
            urls: ctx.urls,
          },
          collector,
        );
      } finally {
        target.close();
      }
      const files = collector.files.map((f) => ({ path: `${VIRTUAL_ROOT}/${f.relative}`, lines: f.lines }));
      return {
        ok: true,
        engine: used,
        path: target.display,
        pattern: args.pattern,
        regex: args.regex,
        ...(args.ignoreCase ? { ignoreCase: true } : {}),
        ...(include ? { include: include.glob } : {}),
        matchedLines: collector.matchedLines,
        files,
        truncated: collector.stop !== undefined,
        ...(collector.stop
          ? { notice: `${STOP_NOTICES[collector.stop]} Showing the first ${collector.matchedLines} lines in path order; narrow with path=, include= or a more specific pattern.` }
          : {}),
        ...(collector.matchedLines === 0 && !collector.stop ? hintsWhenEmpty(args, ctx, targetKind) : {}),
      };
    },
  });
}
