// The version-control tools over MCP: the kernel's git (/v) under the same name and fields (the page's next URL
// becomes the offset and fingerprint of the next call, patches and file texts render as plain text), and
// git_commit (/h), a worktree session's commit on its own branch.
import { z } from "zod";
import { MAX_GIT_PAGE } from "../../kernel/limits.js";
import type { RunOutcome } from "../../tool/run-tool.js";
import { answerOf, jsonText, type McpToolSpec } from "./spec.js";

const READ_ONLY = { readOnlyHint: true, openWorldHint: false } as const;

// Bounds and shape are the kernel's to check (invalid_parameter): left out of the listing every conversation pays.
const revision = z.string();

const gitInput = z.strictObject({
  op: z.enum(["status", "diff", "log", "show", "refs"]).optional().describe("Default status."),
  path: z.string().min(1).optional().describe("diff: this file's patch; log: commits touching it; show: the file."),
  rev: revision.optional().describe("Branch, tag, hash or HEAD~n; diff compares with it."),
  to: revision.optional().describe("diff: rev vs to."),
  staged: z.boolean().optional().describe("diff: index vs HEAD."),
  offset: z.number().int().min(0).max(1e9).optional().describe("A later page: page.nextOffset."),
  limit: z.number().int().min(1).max(MAX_GIT_PAGE).optional().describe("Rows per page."),
  fingerprint: z.string().optional().describe("A later page: page.fingerprint."),
});

interface Page {
  nextOffset?: number;
  fingerprint: string;
  next?: string;
}

/** The kernel's body with its next URL replaced by the arguments of the next call. */
function withoutUrls(outcome: RunOutcome): RunOutcome {
  const body = outcome.body as Record<string, unknown>;
  if (body.ok !== true) return outcome;
  const { next: _next, ...page } = body.page as Page;
  const more =
    page.nextOffset !== undefined
      ? `More follows: call git again with the same arguments plus offset ${page.nextOffset} and fingerprint "${page.fingerprint}".`
      : undefined;
  const notice = [body.notice, more].filter((n) => typeof n === "string").join(" ");
  const worded = { ...body, page, ...(notice ? { notice } : {}) };
  return { ...outcome, body: worded as unknown as RunOutcome["body"] };
}

function render(body: Record<string, unknown>): string {
  const text = typeof body.patch === "string" ? body.patch : typeof body.text === "string" ? body.text : undefined;
  if (text === undefined) return jsonText(body);
  const { patch: _patch, text: _text, ...rest } = body;
  return `${text}\n---\n${jsonText(rest)}`;
}

const git: McpToolSpec = {
  name: "git",
  kernel: "git",
  title: "Version control (read-only)",
  description:
    "Read the git repository: status, diff, log, show (a file at rev), refs (branches, tags). Paged with fingerprints.",
  input: gitInput,
  contentFields: [],
  annotations: READ_ONLY,
  async call(args, call) {
    const input = args as z.infer<typeof gitInput>;
    const outcome = await call.run("git", { ...input });
    return answerOf(withoutUrls(outcome), render);
  },
};

const commitInput = z.strictObject({
  message: z.string().describe("Commit message."),
  paths: z.array(z.string()).optional().describe("Default: all changes."),
});

/** git_commit (/h): the kernel's fields, paths as its repeated path=; exactly once per idempotency key. */
const gitCommit: McpToolSpec = {
  name: "git_commit",
  kernel: "git_commit",
  title: "Commit (worktree sessions)",
  description: "Worktree sessions: commit your changes on this session's own branch. Never pushes.",
  input: commitInput,
  contentFields: [],
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  // The kernel's fields (commit, parent, branch, files, summary) stay in structuredContent; listing them would cost
  // every conversation's tools/list what a worktree session alone uses (docs/MCP.md "Budgets").
  output: () => z.looseObject({ ok: z.literal(true) }),
  async call(args, call) {
    const input = args as z.infer<typeof commitInput>;
    const outcome = await call.run("git_commit", {
      message: input.message,
      ...(input.paths && input.paths.length > 0 ? { path: input.paths } : {}),
    });
    return answerOf(outcome, (body) => (typeof body.summary === "string" ? body.summary : jsonText(body)));
  },
};

export const gitTools: readonly McpToolSpec[] = [git, gitCommit];
