// One version-control question put to git: turns off the repository's filter drivers when git will read the
// working tree, runs the command (git-process.ts) and maps git's failures to catalogued errors.
import { ErrorCode, ToolError } from "../../errors.js";
import type { ToolContext } from "../tool/definition.js";
import type { GitOutput, GitRunner } from "./git-process.js";

export interface GitCall {
  runner: GitRunner;
  ctx: ToolContext;
}

/** What the failing command was about, for the error's words. */
export interface GitSubject {
  rev?: string | undefined;
  path?: string | undefined;
}

// Outside a repository git diff takes its arguments as --no-index's and answers with that usage instead.
const NOT_A_REPOSITORY = /not a git repository|usage: git diff --no-index/i;
const UNKNOWN_REVISION =
  /unknown revision|bad revision|not a valid object name|invalid object name|bad object|ambiguous argument|needed a single revision|not a valid commit/i;
const PATH_NOT_IN_REVISION = /does not exist in|exists on disk, but not in|path '[^']*' does not exist/i;

export function notARepository(): ToolError {
  return new ToolError(
    ErrorCode.notARepository,
    "The project folder is not the top of a git repository (no .git in it, or a .git git cannot open), so /v has nothing to show; read and search its files with /r and /g. A repository in a folder above the project is not used.",
  );
}

export function unknownRevision(rev: string): ToolError {
  return new ToolError(
    ErrorCode.unknownRevision,
    `"${rev}" names no commit, branch or tag of this repository; /v?op=refs lists branches and tags, /v?op=log the commits.`,
    { detail: { rev } },
  );
}

/** The ToolError for a git command that failed; undefined when it did not fail. */
export function gitFailure(output: GitOutput, subject: GitSubject): ToolError | undefined {
  if (output.code === 0) return undefined;
  const message = output.stderr.trim();
  if (NOT_A_REPOSITORY.test(message)) return notARepository();
  if (subject.path !== undefined && PATH_NOT_IN_REVISION.test(message)) {
    return new ToolError(
      ErrorCode.pathNotFound,
      `${subject.path} is not in ${subject.rev ?? "that revision"}; /v?op=log&path=<p> lists the commits that touched a path.`,
      { detail: { path: subject.path, rev: subject.rev } },
    );
  }
  if (UNKNOWN_REVISION.test(message)) return unknownRevision(firstQuoted(message) ?? subject.rev ?? "");
  const line = message.split("\n").find((l) => l.trim() !== "") ?? `exit code ${String(output.code)}`;
  return new ToolError(
    ErrorCode.gitFailed,
    `git failed: ${line.slice(0, 300)}. Change the request, or tell the operator.`,
    {
      detail: { reason: "git_error", exitCode: output.code },
      retryable: false,
    },
  );
}

function firstQuoted(message: string): string | undefined {
  return /'([^']*)'/.exec(message)?.[1];
}

/**
 * Names of the filter drivers this repository configures (filter.<name>.clean and the like): a command that reads
 * the working tree would run them, so the runner turns each off for it. Reading configuration runs nothing.
 */
async function filterDrivers(call: GitCall): Promise<string[]> {
  const output = await call.runner.run(
    call.ctx.project,
    ["config", "-z", "--name-only", "--get-regexp", "^filter\\."],
    { signal: call.ctx.signal, maxBytes: 256 * 1024 },
  );
  if (output.code !== 0) return [];
  const names = new Set<string>();
  for (const key of output.stdout.toString("utf8").split("\0")) {
    const match = /^filter\.(.+)\.[^.]+$/s.exec(key);
    if (match) names.add(match[1]!);
  }
  return [...names];
}

export interface GitCommandOptions {
  /** The command reads the working tree (status, a diff with one side in the working tree): filters are turned off. */
  worktree?: boolean;
  subject?: GitSubject;
  maxBytes?: number;
  /** Exit codes that are answers rather than failures (git diff --exit-code style); default only 0. */
  accept?: (output: GitOutput) => boolean;
  /** The command writes (GitRunOptions.write), with these variables added (env). */
  write?: boolean;
  env?: Record<string, string>;
}

/** Runs git with `args` in the project and answers its output, or throws the catalogued error for its failure. */
export async function runGit(call: GitCall, args: string[], options: GitCommandOptions = {}): Promise<GitOutput> {
  const filters = options.worktree ? await filterDrivers(call) : [];
  const output = await call.runner.run(call.ctx.project, args, {
    filters,
    signal: call.ctx.signal,
    ...(options.maxBytes !== undefined ? { maxBytes: options.maxBytes } : {}),
    ...(options.write ? { write: true } : {}),
    ...(options.env ? { env: options.env } : {}),
  });
  if (options.accept?.(output)) return output;
  const failure = gitFailure(output, options.subject ?? {});
  if (failure) throw failure;
  return output;
}
