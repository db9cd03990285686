// The search family over MCP with OpenCode's names and fields: glob (over the kernel's find, include=) and grep
// (over the kernel's grep: regex unless literal, case-sensitive unless caseSensitive is false).
import { z } from "zod";
import { DEFAULT_FIND_RESULTS, DEFAULT_GREP_MATCHES, MAX_FIND_RESULTS, MAX_GREP_MATCHES } from "../../kernel/limits.js";
import type { FindOutput } from "../../kernel/search/find.js";
import type { GrepOutput } from "../../kernel/search/grep.js";
import type { RunOutcome } from "../../tool/run-tool.js";
import { fitFind, fitGrep } from "./fit.js";
import { answerOf, type McpToolSpec } from "./spec.js";

/** The outcome with its successful body replaced by `fit`'s, when fit returns one. */
function fitted<T>(outcome: RunOutcome, fit: (body: T) => T | undefined): RunOutcome {
  const body = outcome.body as Record<string, unknown>;
  if (body.ok !== true) return outcome;
  const smaller = fit(body as unknown as T);
  return smaller ? { ...outcome, body: smaller as unknown as RunOutcome["body"] } : outcome;
}

// destructiveHint and idempotentHint mean something only when readOnlyHint is false (MCP): left out.
const READ_ONLY = { readOnlyHint: true, openWorldHint: false } as const;
const dirField = z
  .string()
  .min(1)
  .optional()
  .describe("Directory to search, relative to the project root or as /project/...; default the whole project.");

const globInput = z.strictObject({
  pattern: z
    .string()
    .min(1)
    .describe(
      "Glob of files to find: without a / it matches file names at any depth (*.ts, *.{ts,tsx}); with one, paths below `path` (src/**/*.test.ts).",
    ),
  path: dirField,
  hidden: z
    .boolean()
    .optional()
    .describe(
      "true: also search .gitignore'd paths, .git and node_modules (skipped by default). Dotfiles are always searched.",
    ),
  limit: z
    .number()
    .int()
    .min(1)
    .max(MAX_FIND_RESULTS)
    .optional()
    .describe(`Most files to return (default ${DEFAULT_FIND_RESULTS}, at most ${MAX_FIND_RESULTS}).`),
});

const glob: McpToolSpec = {
  name: "glob",
  kernel: "find",
  title: "Find files by glob",
  description:
    "Find files whose name or path matches a glob, recursively, newest first (by modification time), bounded; files only. Read a match with read.",
  input: globInput,
  contentFields: ["pattern"],
  annotations: READ_ONLY,
  async call(args, call) {
    const { pattern, path, hidden, limit } = args as z.infer<typeof globInput>;
    const outcome = await call.run("find", {
      include: pattern,
      sort: "mtime",
      ...(path !== undefined ? { path } : {}),
      ...(hidden ? { ignored: true } : {}),
      ...(limit !== undefined ? { limit } : {}),
    });
    // The kernel's notices name URL parameters: the note names this tool's fields instead, in the text and as
    // notice. glob has no field to continue after a path: the kernel's next (a URL with after=) is left out.
    const note = (found: FindOutput): string | undefined => {
      if (found.truncated)
        return `More files may match (the search stopped at limit or a walk bound): narrow with path or a more specific pattern${limit === undefined ? ", or raise limit" : ""}.`;
      if (found.results.length === 0)
        return `No file under ${found.path} matches ${pattern}.${hidden ? "" : " .gitignore'd paths, .git and node_modules were skipped: set hidden: true to include them."}`;
      return undefined;
    };
    const shaped = fitted<FindOutput>(outcome, ({ next: _next, includeUrl: _include, notice: _notice, ...found }) => {
      const fit = fitFind(found, "Narrow with path or a more specific pattern.");
      if (fit) return fit;
      const notice = note(found);
      return notice ? { ...found, notice } : found;
    });
    return answerOf(shaped, (body) => {
      const found = body as unknown as FindOutput;
      const lines = found.results.map((r) => r.path);
      const notice = note(found);
      if (notice) lines.push(notice);
      return lines.join("\n");
    });
  },
};

const grepInput = z.strictObject({
  pattern: z.string().min(1).describe("A regular expression (ripgrep syntax), or plain text with literal: true."),
  path: z.string().min(1).optional().describe("File or directory to search; default the whole project."),
  include: z.string().min(1).optional().describe("Only files matching this glob: *.ts, *.{ts,tsx}, or src/**/*.ts."),
  caseSensitive: z.boolean().optional().describe("false: ignore case. Default true."),
  literal: z.boolean().optional().describe("true: match pattern as plain text, no regex syntax. Default false."),
  limit: z
    .number()
    .int()
    .min(1)
    .max(MAX_GREP_MATCHES)
    .optional()
    .describe(`Most matching lines to return (default ${DEFAULT_GREP_MATCHES}, at most ${MAX_GREP_MATCHES}).`),
});

const grep: McpToolSpec = {
  name: "grep",
  kernel: "grep",
  title: "Search file contents",
  description:
    "Search file contents with a regular expression (or literal text), .gitignore respected; answers path:line: text, bounded.",
  input: grepInput,
  contentFields: ["pattern"],
  annotations: READ_ONLY,
  async call(args, call) {
    const { pattern, path, include, caseSensitive, literal, limit } = args as z.infer<typeof grepInput>;
    const outcome = await call.run("grep", {
      pattern,
      regex: literal !== true,
      ...(caseSensitive === false ? { ignoreCase: true } : {}),
      ...(path !== undefined ? { path } : {}),
      ...(include !== undefined ? { include } : {}),
      ...(limit !== undefined ? { limit } : {}),
    });
    // The kernel's notices and URLs (regexUrl, ignoredUrl, a skipped file's searchUrl) name the URL routes: the
    // note names this tool's fields instead, in the text and as notice.
    const note = (found: GrepOutput): string | undefined => {
      const skipped = found.skipped?.length
        ? `${found.skipped.length} file(s) match but show no lines (binary content, or a matching line over 16 MiB): search them with shell (rg -a).`
        : "";
      if (found.truncated)
        return `${skipped} The search stopped at a bound (limit, output size or time): narrow with path or include, or raise limit.`.trim();
      if (found.matchedLines === 0 && !found.skipped?.length)
        return `No match for ${pattern} in ${found.path}${literal ? "" : " (as a regular expression; set literal: true to match it as plain text)"}. .gitignore'd paths are not searched.`;
      return skipped || undefined;
    };
    const shaped = fitted<GrepOutput>(
      outcome,
      ({ regexUrl: _regex, ignoredUrl: _ignored, notice: _notice, ...rest }) => {
        const found = {
          ...rest,
          ...(rest.skipped ? { skipped: rest.skipped.map(({ searchUrl: _url, ...file }) => file) } : {}),
        };
        const fit = fitGrep(found, "Narrow with path, include or a more specific pattern.");
        if (fit) return fit;
        const notice = note(found);
        return notice ? { ...found, notice } : found;
      },
    );
    return answerOf(shaped, (body) => {
      const found = body as unknown as GrepOutput;
      const lines: string[] = [];
      for (const file of found.files) for (const l of file.lines) lines.push(`${file.path}:${l.line}: ${l.text}`);
      // Files that match but show no lines are named, never dropped (the kernel's skipped[]).
      for (const file of found.skipped ?? [])
        lines.push(
          `${file.path}: matches, not shown (${file.reason === "binary" ? "binary content" : "a matching line over 16 MiB"})`,
        );
      const notice = note(found);
      if (notice) lines.push(notice);
      return lines.join("\n");
    });
  },
};

export const searchTools: readonly McpToolSpec[] = [glob, grep];
