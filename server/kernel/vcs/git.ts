// git (/v): the repository's state without the terminal, read-only: status, diff, log, a file at a revision,
// branches and tags. Every list and text is paged with a fingerprint that refuses a repository changed between pages.
import { z } from "zod";
import { ErrorCode, ToolError } from "../../errors.js";
import { isInside, lexicalTarget, outsideRoot, toDisplayPath } from "../../sandbox/path-lexical.js";
import { DEFAULT_GIT_PAGE, MAX_GIT_PAGE } from "../limits.js";
import { defineTool, type ToolContext } from "../tool/definition.js";
import type { SlotGate } from "../tool/slot-gate.js";
import type { GitCall } from "./git-command.js";
import { describeSides, diffFile, isRange, readDiff } from "./git-diff.js";
import { commitRow, readFileAt, readLog, readRefs, refRow, verifyCommit } from "./git-history.js";
import {
  checkFingerprint,
  FINGERPRINT_PATTERN,
  fingerprintOf,
  pageOpen,
  pageOutput,
  pageRows,
  pageText,
} from "./git-page.js";
import type { GitRunner } from "./git-process.js";
import { headOutput, readStatus, statusEntry } from "./git-status.js";

/** A branch, tag, hash or HEAD~n / main..topic: never an option (-), a rev:path (:), spaces or control characters. */
const revision = z
  .string()
  .min(1)
  .max(256)
  .regex(
    /^[^-\s:\p{Cc}][^\s:\p{Cc}]*$/u,
    "a revision is a branch, tag, commit hash or HEAD~n: no spaces or ':', not starting with '-'",
  );

const schema = z.object({
  op: z.enum(["status", "diff", "log", "show", "refs"]).default("status"),
  path: z.string().optional(),
  rev: revision.optional(),
  to: revision.optional(),
  staged: z.boolean().default(false),
  offset: z.number().int().min(0).max(1_000_000_000).default(0),
  limit: z.number().int().min(1).max(MAX_GIT_PAGE).default(DEFAULT_GIT_PAGE),
  fingerprint: z.string().regex(FINGERPRINT_PATTERN, "a fingerprint is the 16 hex digits a page answered").optional(),
});

type GitArgs = z.infer<typeof schema>;

/** What /v answers: `op` says which of the optional groups is present. */
export const gitOutput = z.strictObject({
  ok: z.literal(true),
  op: z.enum(["status", "diff", "log", "show", "refs"]).describe("Which view answered; its fields follow."),
  head: headOutput.optional(),
  entries: z.array(statusEntry).optional().describe("op=status: one row per path and side that differs."),
  against: z.string().optional().describe("op=diff: the two sides compared, in words."),
  files: z.array(diffFile).optional().describe("op=diff without path=: the files that differ."),
  patch: z.string().optional().describe("op=diff with path=: this page of the unified diff of that file or folder."),
  path: z.string().optional().describe("Echo of path=, in /project/... form."),
  rev: z.string().optional().describe("Echo of the revision read."),
  commits: z.array(commitRow).optional().describe("op=log: newest first."),
  commit: z.string().optional().describe("op=show: the commit rev= resolved to."),
  blob: z.string().optional().describe("op=show: the file's object hash."),
  size: z.number().int().optional().describe("op=show: the file's size in bytes."),
  binary: z.literal(true).optional().describe("op=show: present for a binary file, whose text is not shown."),
  text: z.string().optional().describe("op=show: this page of the file's text."),
  refs: z.array(refRow).optional().describe("op=refs: branches, tags and remote branches, by name."),
  page: pageOutput,
  notice: z.string().optional().describe("What an empty answer means, or where to go next."),
});

type GitOutput = z.infer<typeof gitOutput>;

/** path= as a path below the project root ("" is the root itself: no filter), and as the agent sees it. */
function relativePath(ctx: ToolContext, input: string | undefined): { relative?: string; display?: string } {
  if (input === undefined) return {};
  const root = ctx.project.root;
  const absolute = lexicalTarget(root, input);
  if (!isInside(root, absolute)) throw outsideRoot(input);
  const display = toDisplayPath(root, absolute);
  return absolute === root ? { display } : { relative: absolute.slice(root.length + 1), display };
}

async function status(call: GitCall, args: GitArgs): Promise<GitOutput> {
  const { head, entries } = await readStatus(call);
  const { rows, page } = pageRows(entries, args, call.ctx, "status");
  return {
    ok: true,
    op: "status",
    head,
    entries: rows,
    page,
    ...(entries.length === 0 ? { notice: "Nothing to commit: the working tree and index match HEAD." } : {}),
  };
}

async function diff(call: GitCall, args: GitArgs): Promise<GitOutput> {
  if (isRange(args.rev) && (args.staged || args.to !== undefined)) {
    throw new ToolError(
      ErrorCode.conflictingParameters,
      `rev=${args.rev} names both sides already; leave out staged= and to=.`,
      { detail: { parameters: ["rev", args.staged ? "staged" : "to"] } },
    );
  }
  if (args.staged && args.to !== undefined) {
    throw new ToolError(
      ErrorCode.conflictingParameters,
      "staged=1 compares the index with rev= (default HEAD); to= compares two revisions. Give one of them.",
      { detail: { parameters: ["staged", "to"] } },
    );
  }
  const sides = { rev: args.rev, to: args.to, staged: args.staged };
  const { relative, display } = relativePath(call.ctx, args.path);
  const { files, patch, whole } = await readDiff(call, sides, relative);
  const against = describeSides(sides);
  if (display !== undefined) {
    const shown = pageText(patch, args, call.ctx, "diff");
    return {
      ok: true,
      op: "diff",
      against,
      path: display,
      patch: shown.text,
      page: shown.page,
      ...(patch === "" ? { notice: `No difference under ${display} (${against}).` } : {}),
    };
  }
  const { rows, page } = pageRows(files, args, call.ctx, "diff", whole);
  return {
    ok: true,
    op: "diff",
    against,
    files: rows,
    page,
    notice:
      files.length === 0
        ? `No difference (${against}).${sides.staged || sides.rev || sides.to ? "" : " staged=1 shows staged changes; untracked files appear in op=status."}`
        : "path=<file> answers that file's patch.",
  };
}

async function log(call: GitCall, args: GitArgs): Promise<GitOutput> {
  const { relative, display } = relativePath(call.ctx, args.path);
  const { resolved, commits, more } = await readLog(call, args.rev, relative, args.offset, args.limit);
  // The log is determined by where it starts and the path it follows: a moved branch refuses a later page.
  const fingerprint = fingerprintOf([resolved ?? "", relative ?? ""]);
  checkFingerprint(args, fingerprint, "log");
  const { rows, page } = pageOpen(commits, args, fingerprint, more, call.ctx);
  return {
    ok: true,
    op: "log",
    rev: args.rev ?? "HEAD",
    ...(display !== undefined ? { path: display } : {}),
    commits: rows,
    page,
    ...(resolved === undefined ? { notice: "The repository has no commits yet." } : {}),
  };
}

async function show(call: GitCall, args: GitArgs): Promise<GitOutput> {
  const { relative, display } = relativePath(call.ctx, args.path);
  if (relative === undefined || display === undefined) {
    throw new ToolError(ErrorCode.missingParameter, "op=show needs path= naming a file (and rev=, default HEAD).", {
      detail: { parameter: "path" },
    });
  }
  const rev = args.rev ?? "HEAD";
  const commit = await verifyCommit(call, rev);
  const file = await readFileAt(call, commit, relative, display);
  const base = { ok: true as const, op: "show" as const, path: display, rev, commit, blob: file.blob, size: file.size };
  if (file.text === undefined) {
    return {
      ...base,
      binary: true,
      page: { offset: 0, total: file.size, fingerprint: file.blob.slice(0, 16) },
      notice: `${display} is binary at ${rev} (${file.size} bytes); its content is not shown.`,
    };
  }
  const shown = pageText(file.text, args, call.ctx, "file");
  return { ...base, text: shown.text, page: shown.page };
}

async function refs(call: GitCall, args: GitArgs): Promise<GitOutput> {
  const all = await readRefs(call);
  const { rows, page } = pageRows(all, args, call.ctx, "branch and tag list");
  return { ok: true, op: "refs", refs: rows, page };
}

const OPS = { status, diff, log, show, refs } as const;

/** `runner`: how git starts (git-process.ts); `gate`: the bridge's search slots, shared with /g (search-gate.ts). */
export function createGitTool(runner: GitRunner, gate: SlotGate) {
  return defineTool({
    id: "git",
    route: "v",
    longRoutes: ["vcs"],
    capability: "read",
    description:
      "Version control, read-only: op=status|diff (staged=1, rev=, to=, path=<file> for its patch)|log (path=)|show (path=, rev=)|refs; paged with fingerprints.",
    example: "/v?op=diff&path=src/app.ts",
    schema,
    output: gitOutput,
    url: { aliases: { file: "path", ref: "rev", from: "rev", cached: "staged" } },
    async execute(args, ctx) {
      const release = await gate.acquire({ key: ctx.session.id, signal: ctx.signal });
      try {
        return await OPS[args.op]({ runner, ctx }, args);
      } finally {
        release();
      }
    },
  });
}
