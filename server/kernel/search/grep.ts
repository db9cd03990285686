// grep (/g): literal-first search of one file or a directory tree, bounded, in path-then-line order.
import { z } from "zod";
import { ErrorCode, ToolError } from "../../errors.js";
import { readHeldFile } from "../../sandbox/fd-ops.js";
import { walkInsideRoot, type HeldPath } from "../../sandbox/fd-walk.js";
import { VIRTUAL_ROOT } from "../../sandbox/paths.js";
import { grepLine, MatchCollector, type GrepStop, type SkipReason } from "./grep-collect.js";
import type { GrepEngine } from "./grep-search.js";
import type { SlotGate } from "../tool/slot-gate.js";
import { createIncludeFilter } from "./include-glob.js";
import {
  DEFAULT_GREP_MATCHES,
  MAX_GREP_MATCHES,
  MAX_GREP_OUTPUT_BYTES,
  MAX_SEARCH_FILE_BYTES,
  MAX_SEARCH_MS,
} from "../limits.js";
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
  engine: z
    .enum(["rg", "fallback"])
    .describe("Which engine searched (ripgrep or the portable one); the answer is the same either way."),
  path: z.string().describe("The file or directory searched, in /project/... form."),
  pattern: z.string().describe("Echo of the pattern searched."),
  regex: z.boolean().describe("false: the pattern was matched literally; true: as a regular expression."),
  ignoreCase: z.literal(true).optional().describe("Present when matching ignored case."),
  include: z.string().optional().describe("Echo of include=, when given."),
  matchedLines: z.number().int().min(0).describe("Matching lines returned, over all files."),
  files: z
    .array(
      z.strictObject({
        path: z.string().describe("The file in /project/... form."),
        lines: z.array(grepLine).describe("Its matching lines in line order."),
      }),
    )
    .describe("Files with matches, in path order; files without matches are left out."),
  truncated: z
    .boolean()
    .describe(
      "true: the search stopped at a bound (limit=, output bytes or time); notice says which and how to narrow.",
    ),
  skipped: z
    .array(
      z.strictObject({
        path: z.string().describe("The file in /project/... form."),
        reason: z
          .enum(["binary", "long_line"])
          .describe(
            "binary: it holds NUL bytes (a match was found with NULs read as line ends); long_line: a matching line is over 16 MiB.",
          ),
        searchUrl: z
          .string()
          .optional()
          .describe(
            "When the project allows the terminal: exact /x URL that searches this file with rg -a (binary) or shows the match clipped (long_line).",
          ),
      }),
    )
    .optional()
    .describe("Present when files hold a match but show no lines; in path order, within the same bounds as files."),
  notice: z
    .string()
    .optional()
    .describe(
      "Present when truncated, when files were skipped, or when nothing matched (then it says what was searched and how to widen).",
    ),
  regexUrl: z
    .string()
    .optional()
    .describe(
      "When nothing matched a pattern that looks like a regex searched literally: exact URL searching it as a regex.",
    ),
  ignoredUrl: z
    .string()
    .optional()
    .describe(
      "When nothing matched in a directory: exact URL searching .gitignore'd paths, .git and node_modules too.",
    ),
  findUrl: z
    .string()
    .optional()
    .describe(
      "When nothing matched a pattern that looks like a file-name glob (*.py): exact /f URL listing the files it names.",
    ),
});

export type GrepOutput = z.infer<typeof grepOutput>;

const STOP_NOTICES: Record<GrepStop, string> = {
  matches: "More lines match than limit= allows.",
  bytes: `The matching lines exceed ${MAX_GREP_OUTPUT_BYTES} bytes of text.`,
  time: `The search took longer than ${MAX_SEARCH_MS / 1000} s and stopped.`,
};

/** Looks like the agent meant a regex but searched literally. */
// A bracket class is looked for up to the next [ (`\[[^\]]+\]` scanned to the end from every [ of a pattern
// with no ], quadratic in its length).
export const REGEX_LOOK = /\\[dwsbDWSB.]|\.\*|\.\+|\[[^\][]+\]|\(\?:|\(\?[imsu]+\)|\(\?P?<[A-Za-z_]|\|/;
/** A pattern shaped like a file-name glob (*.py, test_*.py): no spaces, a *, a name-like rest. */
const FILE_GLOB_LOOK = /^[\w./{},-]*\*[\w./{},*?-]*$/;

function binaryFileError(display: string, size: number): ToolError {
  return new ToolError(
    ErrorCode.binaryFile,
    `${display} is a binary file (it contains NUL bytes); /g searches text only. Point path= at a text file or a directory; /t shows this file's size.`,
    {
      detail: { path: display, size },
      retryable: false,
    },
  );
}

/** A file named in path=: refused when binary or in an encoding rg skips. A large one is judged by its first 8 MiB (the engines stream the rest). */
async function checkSingleFile(target: HeldPath, display: string, size: number): Promise<void> {
  const file = decodeLossy(await readHeldFile(target.fd!, Math.min(size, MAX_SEARCH_FILE_BYTES)));
  if (file.kind === "binary") throw binaryFileError(display, size);
  // ripgrep takes UTF-32 and BOM-less UTF-16 for binary (their NUL bytes), and both engines answer as it does.
  if (!ripgrepSearches(file.encoding)) {
    throw new ToolError(
      ErrorCode.binaryFile,
      `${display} is ${file.encoding} text, which /g skips as binary (ripgrep reads only UTF-8 and BOM-marked UTF-16). Read it with /r, or find a line in it with /f?query=.`,
      {
        detail: { path: display, size, encoding: file.encoding },
        retryable: false,
      },
    );
  }
}

function hintsWhenEmpty(
  args: GrepArgs,
  ignoreCase: boolean,
  ctx: ToolContext,
  targetKind: "file" | "dir",
): Pick<GrepOutput, "notice" | "regexUrl" | "ignoredUrl" | "findUrl"> {
  const hints: Pick<GrepOutput, "regexUrl" | "ignoredUrl" | "findUrl"> = {};
  const notes: string[] = ["No line matches."];
  if (!args.regex && FILE_GLOB_LOOK.test(args.pattern)) {
    // pattern=*.py: the agent meant files named so (issue 27 item 3); /g searches lines, /f?include= names files.
    hints.findUrl = ctx.urls.to("r", "f", [
      ...(args.path === undefined ? [] : [["path", args.path] as [string, string]]),
      ["include", args.pattern],
    ]);
    notes.push(
      `"${args.pattern}" looks like a file-name glob; /g searches the text of lines, and findUrl lists the files it names.`,
    );
  }
  if (!args.regex && REGEX_LOOK.test(args.pattern)) {
    notes.push("The pattern was searched literally; regexUrl searches it as a regex.");
    const url = ctx.urls.repair({ drop: ["regex"], add: [["regex", "1"]] });
    if (url) hints.regexUrl = url;
  }
  if (!ignoreCase) notes.push("Matching is case-sensitive (ignoreCase=1 to change).");
  if (targetKind === "dir" && !args.ignored) {
    notes.push(".gitignore'd paths, .git and node_modules were skipped; ignoredUrl searches them too.");
    const url = ctx.urls.repair({ drop: ["ignored"], add: [["ignored", "1"]] });
    if (url) hints.ignoredUrl = url;
  }
  return { notice: notes.join(" "), ...hints };
}

/** Shell single quotes around any text. */
const shellQuote = (text: string) => `'${text.replaceAll("'", "'\\''")}'`;

/** With the terminal allowed: the rg command that shows what /g left out of one file. */
function skippedSearchUrl(
  args: GrepArgs,
  ctx: ToolContext,
  relative: string,
  reason: SkipReason,
): { searchUrl?: string } {
  if (!ctx.project.permissions.terminal) return {};
  const flags = [
    "-n",
    ...(args.regex ? [] : ["-F"]),
    ...(args.ignoreCase ? ["-i"] : []),
    ...(reason === "binary" ? ["-a"] : ["--max-columns=240", "--max-columns-preview"]),
  ];
  const command = `rg ${flags.join(" ")} -e ${shellQuote(args.pattern)} -- ${shellQuote(`./${relative}`)}`;
  return { searchUrl: ctx.urls.to("m", "x", [], command) };
}

function skippedNotice(count: number, ctx: ToolContext): string {
  const how = ctx.project.permissions.terminal
    ? "each entry's searchUrl runs rg on it through /x"
    : "/t shows each one's size";
  return `${count} file(s) hold a match but show no lines (skipped: binary content, or a matching line over 16 MiB); ${how}.`;
}

/** The no-match hints, after any notice already written (skipped files). */
function withNotices(
  hints: Pick<GrepOutput, "notice" | "regexUrl" | "ignoredUrl">,
  notices: string[],
): Pick<GrepOutput, "notice" | "regexUrl" | "ignoredUrl"> {
  return notices.length === 0 ? hints : { ...hints, notice: [...notices, hints.notice].filter(Boolean).join(" ") };
}

/** `gate`: the bridge's search slots, one per bridge (search-gate.ts). */
export function createGrepTool(engine: GrepEngine, gate: SlotGate) {
  return defineTool({
    id: "grep",
    route: "g",
    longRoutes: ["search"],
    capability: "read",
    description:
      "Search file contents (literal unless regex=1) in one file or a directory; bounded, in path then line order.",
    example: "/g?path=src&raw=TODO",
    schema,
    output: grepOutput,
    url: { aliases: { grep: "pattern", query: "pattern", file: "path" }, rawField: "pattern" },
    async execute(args, ctx) {
      const pattern = compileSearchPattern(args.pattern, {
        regex: args.regex,
        ignoreCase: args.ignoreCase,
        urls: ctx.urls,
      });
      const include = args.include === undefined ? undefined : createIncludeFilter(args.include);
      const target = walkInsideRoot(ctx.project.root, args.path ?? VIRTUAL_ROOT, { allowMissing: false });
      const collector = new MatchCollector({ maxMatches: args.limit, maxBytes: MAX_GREP_OUTPUT_BYTES });
      let used: Awaited<ReturnType<GrepEngine["run"]>>;
      let targetKind: "file" | "dir";
      try {
        const info = target.stats!;
        const kind = info.isDirectory() ? "dir" : info.isFile() ? "file" : undefined;
        if (!kind) {
          throw new ToolError(
            ErrorCode.notAFile,
            `${target.display} is neither a file nor a directory (a socket, FIFO or device); give a file or directory in path=.`,
            {
              detail: { path: target.display },
            },
          );
        }
        targetKind = kind;
        if (kind === "file") await checkSingleFile(target, target.display, info.size);
        // A slot of the bridge's few, taken in this session's turn; the search's own time starts once it is held.
        const release = await gate.acquire({ key: ctx.session.id, signal: ctx.signal });
        try {
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
          release();
        }
      } finally {
        target.close();
      }
      // A named file with a NUL past the first 8 MiB is found binary only by the search.
      if (targetKind === "file" && collector.skipped.some((f) => f.reason === "binary"))
        throw binaryFileError(target.display, target.stats!.size);
      const files = collector.files.map((f) => ({ path: `${VIRTUAL_ROOT}/${f.relative}`, lines: f.lines }));
      const skipped = collector.skipped.map((f) => ({
        path: `${VIRTUAL_ROOT}/${f.relative}`,
        reason: f.reason,
        ...skippedSearchUrl(args, ctx, f.relative, f.reason),
      }));
      const notices = [
        ...(collector.stop
          ? [
              `${STOP_NOTICES[collector.stop]} Showing the first ${collector.matchedLines} lines in path order; narrow with path=, include= or a more specific pattern.`,
            ]
          : []),
        ...(skipped.length > 0 ? [skippedNotice(skipped.length, ctx)] : []),
      ];
      return {
        ok: true,
        engine: used,
        path: target.display,
        pattern: args.pattern,
        regex: args.regex,
        ...(pattern.ignoreCase ? { ignoreCase: true } : {}),
        ...(include ? { include: include.glob } : {}),
        matchedLines: collector.matchedLines,
        files,
        truncated: collector.stop !== undefined,
        ...(skipped.length > 0 ? { skipped } : {}),
        ...(notices.length > 0 ? { notice: notices.join(" ") } : {}),
        ...(collector.matchedLines === 0 && !collector.stop
          ? withNotices(hintsWhenEmpty(args, pattern.ignoreCase, ctx, targetKind), notices)
          : {}),
      };
    },
  });
}
