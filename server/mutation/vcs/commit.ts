// git_commit (/h): commits a worktree session's changes (all of them, or the paths named) with the agent's message on
// the session's own branch, as a journaled intent (exactly once per call id). Refused when the session has no
// worktree or HEAD is not its branch (switched by someone else: the session's terminal may read the repository's
// git folder but not write it); never pushes, never touches another branch. git runs as the agent under the
// sandbox launcher, with the worktree and the main repository's git folder writable, hooks, filters and signing off
// (kernel/vcs/git-process.ts).
import { z } from "zod";
import { ErrorCode, ToolError } from "../../errors.js";
import { defineTool, type ToolContext } from "../../kernel/tool/definition.js";
import { runGit, type GitCall } from "../../kernel/vcs/git-command.js";
import type { GitRunner } from "../../kernel/vcs/git-process.js";
import { isInside, lexicalTarget, outsideRoot, toDisplayPath } from "../../sandbox/path-lexical.js";
import { journalControls } from "../journal/controls.js";

/** Longest commit message accepted (a subject and a body of a few paragraphs). */
export const MAX_COMMIT_MESSAGE = 8 * 1024;
/** Most paths one commit may name; all (no path=) has no such bound. */
export const MAX_COMMIT_PATHS = 100;
/** Files listed one by one in an answer. */
const MAX_LISTED = 200;

/** Who an agent's commit is by: the session's name, never a person (docs/PROTOCOL.md "/h git_commit"). */
export function agentAuthor(ctx: ToolContext): Record<string, string> {
  const name = `${ctx.session.name} (urlbridge agent)`;
  const email = "agent@urlbridge.invalid";
  return {
    GIT_AUTHOR_NAME: name,
    GIT_AUTHOR_EMAIL: email,
    GIT_COMMITTER_NAME: name,
    GIT_COMMITTER_EMAIL: email,
  };
}

const committedFile = z.strictObject({
  path: z.string().describe("In /project/... form."),
  status: z.string().describe("git's letter: A added, M modified, D deleted, T type changed."),
});

export const commitOutput = z.strictObject({
  ok: z.literal(true),
  commit: z.string().describe("The new commit's hash; the session's branch now points at it."),
  parent: z.string().describe("The branch's head before."),
  branch: z.string().describe("The session's branch the commit is on."),
  files: z.array(committedFile).describe(`What the commit changed (the first ${MAX_LISTED}).`),
  summary: z.string().describe("One line: the commit, its branch and how many files."),
});

const schema = z.object({
  message: z.string().trim().min(1, "message= is the commit message").max(MAX_COMMIT_MESSAGE),
  path: z.array(z.string()).max(MAX_COMMIT_PATHS).optional(),
  ...journalControls,
});

function relativePaths(ctx: ToolContext, inputs: string[]): string[] {
  const root = ctx.project.root;
  return inputs.map((input) => {
    const absolute = lexicalTarget(root, input);
    if (!isInside(root, absolute)) throw outsideRoot(input);
    return absolute === root ? "." : absolute.slice(root.length + 1);
  });
}

function parseNameStatus(root: string, text: string): Array<{ path: string; status: string }> {
  const parts = text.split("\0");
  const files: Array<{ path: string; status: string }> = [];
  for (let i = 0; i + 1 < parts.length; i += 2) {
    files.push({ status: parts[i]!.slice(0, 1), path: toDisplayPath(root, `${root}/${parts[i + 1]!}`) });
  }
  return files;
}

async function requireSessionBranch(call: GitCall, branch: string): Promise<string> {
  const head = await runGit(call, ["symbolic-ref", "-q", "HEAD"], { accept: (o) => o.code === 1 });
  const current = head.code === 0 ? head.stdout.toString("utf8").trim() : "a detached HEAD";
  if (current !== `refs/heads/${branch}`) {
    throw new ToolError(
      ErrorCode.notOnSessionBranch,
      `The worktree is on ${current.replace(/^refs\/heads\//, "")}, not this session's branch ${branch}; git_commit commits only there. Ask the operator to switch the worktree back to ${branch} (git switch ${branch} in it), then commit again.`,
      { detail: { branch, head: current } },
    );
  }
  return (await runGit(call, ["rev-parse", "--verify", "HEAD^{commit}"])).stdout.toString("utf8").trim();
}

/**
 * Paths in the whole index recorded as gitlinks (mode 160000: a submodule, or a nested repository an add recorded):
 * a commit of other paths still checks them.
 */
async function gitlinks(call: GitCall): Promise<string[]> {
  const listed = (await runGit(call, ["ls-files", "-s", "-z"])).stdout.toString("utf8");
  return listed
    .split("\0")
    .filter((entry) => entry.startsWith("160000 "))
    .map((entry) => entry.slice(entry.indexOf("\t") + 1));
}

/** Untracked nested repositories: status lists each as one folder (`?? sub/`), never its files. */
async function untrackedRepositories(call: GitCall, scope: string[]): Promise<string[]> {
  const status = ["status", "--porcelain=v1", "-z", "--untracked-files=all", "--ignore-submodules=all", ...scope];
  const listed = (await runGit(call, status, { worktree: true })).stdout.toString("utf8");
  return listed
    .split("\0")
    .filter((entry) => entry.startsWith("?? ") && entry.endsWith("/"))
    .map((entry) => entry.slice(3, -1));
}

function nestedRepository(ctx: ToolContext, paths: string[]): ToolError {
  const shown = paths.slice(0, 5).map((p) => toDisplayPath(ctx.project.root, `${ctx.project.root}/${p}`));
  return new ToolError(
    ErrorCode.nestedRepository,
    `${shown.join(", ")}${paths.length > 5 ? ", …" : ""} ${paths.length === 1 ? "is a git repository" : "are git repositories"} of ${paths.length === 1 ? "its" : "their"} own (or a submodule): git would enter it and run what its configuration names, so git_commit commits no nested repository and nothing was committed. Remove its .git folder, or commit other paths with path=.`,
    { detail: { paths: shown } },
  );
}

/**
 * Refuses a worktree with a gitlink, or a nested repository in scope. git add and commit check a gitlink's repository by running
 * that repository's own git, which reads its own config (filters no one turned off) with the main git folder
 * writable; .gitmodules' submodule.<name>.ignore outranks diff.ignoreSubmodules, and add and commit take no
 * --ignore-submodules. So no gitlink may be in the index when add runs (add records a new one without entering it).
 */
async function refuseNestedRepositories(call: GitCall, scope: string[]): Promise<void> {
  const nested = [...(await gitlinks(call)), ...(await untrackedRepositories(call, scope))];
  if (nested.length > 0) throw nestedRepository(call.ctx, nested);
}

export function createCommitTool(runner: GitRunner) {
  return defineTool({
    id: "git_commit",
    route: "h",
    longRoutes: ["commit"],
    capability: "mutation",
    permission: "write",
    worktreeOnly: true,
    description:
      "Worktree sessions: commit the worktree's changes (all, or path= repeated) with message= on this session's own branch; never pushes.",
    example: "/h?message=Fix+the+login+redirect",
    schema,
    output: commitOutput,
    url: { aliases: { m: "message", msg: "message", file: "path" } },
    async execute(args, ctx) {
      const worktree = ctx.worktree;
      if (!worktree) {
        throw new ToolError(
          ErrorCode.notAWorktreeSession,
          "This session works in the project folder itself, not in a worktree of its own, so it has no branch to commit to; the operator commits there. Sessions the operator creates with a worktree can commit.",
        );
      }
      const call: GitCall = { runner, ctx };
      const parent = await requireSessionBranch(call, worktree.branch);
      const paths = args.path ? relativePaths(ctx, args.path) : undefined;
      const scope = paths ? ["--", ...paths] : ["--", "."];
      await refuseNestedRepositories(call, scope);
      await runGit(call, ["add", "-A", ...scope], { worktree: true, write: true });
      // A repository made between the check and the add is now a gitlink: taken out of the index again before any
      // command that would enter it (update-index reads no working tree).
      const added = await gitlinks(call);
      if (added.length > 0) {
        await runGit(call, ["update-index", "--force-remove", "--", ...added], { write: true });
        throw nestedRepository(ctx, added);
      }
      const staged = await runGit(
        call,
        ["diff", "--cached", "--quiet", "--ignore-submodules=all", ...(paths ? scope : [])],
        {
          accept: (o) => o.code === 1,
        },
      );
      if (staged.code === 0) {
        throw new ToolError(
          ErrorCode.nothingToCommit,
          `Nothing to commit${paths ? " under the paths named" : ""}: the worktree matches ${worktree.branch}. /v?op=status shows what changed.`,
        );
      }
      const commitArgs = ["commit", "--no-verify", "--no-gpg-sign", "-q", "--cleanup=strip", "-m", args.message];
      await runGit(call, paths ? [...commitArgs, "--only", ...scope] : commitArgs, {
        worktree: true,
        write: true,
        env: agentAuthor(ctx),
      });
      const commit = (await runGit(call, ["rev-parse", "--verify", "HEAD^{commit}"])).stdout.toString("utf8").trim();
      const listed = await runGit(call, ["diff-tree", "--no-commit-id", "-r", "--name-status", "-z", parent, commit]);
      const files = parseNameStatus(ctx.project.root, listed.stdout.toString("utf8"));
      return {
        ok: true as const,
        commit,
        parent,
        branch: worktree.branch,
        files: files.slice(0, MAX_LISTED),
        summary: `Committed ${commit.slice(0, 12)} on ${worktree.branch}: ${files.length} file${files.length === 1 ? "" : "s"}.`,
      };
    },
  });
}
