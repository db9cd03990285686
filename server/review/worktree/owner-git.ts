// Runs git for the operator's worktree actions (review, merge, keep, discard): as the project's owner (the identity
// its files belong to), in a scrubbed environment, bounded in time and output, with every setting a repository
// could use to start a program turned off (hooks, fsmonitor, filters, signing, pager), so git is the only
// program that runs. The agent may write the repository's metadata from its terminal; nothing it writes there
// runs as the bridge.
import { spawn } from "node:child_process";
import { buildChildEnv } from "../../sandbox/env-scrub.js";
import type { Identity } from "../../sandbox/identity.js";
import { gitBinary } from "../../kernel/vcs/git-process.js";
import { WorktreeError, WorktreeErrorCode } from "./worktree-errors.js";

/** Longest a single operator git command may take (a merge of a large tree included). */
export const OWNER_GIT_TIMEOUT_MS = 60_000;
/** Most stdout kept from one command (a whole branch diff is paged from this). */
export const MAX_OWNER_GIT_OUTPUT_BYTES = 32 * 1024 * 1024;
const MAX_STDERR_BYTES = 8 * 1024;

/** Command-line scope settings, which outrank every configuration file the repository or the agent wrote. */
const SAFE_SETTINGS: Array<[string, string]> = [
  ["core.hooksPath", "/dev/null"],
  ["core.fsmonitor", "false"],
  ["core.quotePath", "false"],
  ["core.pager", "cat"],
  ["core.editor", "false"],
  ["color.ui", "false"],
  ["diff.external", ""],
  ["diff.noprefix", "false"],
  ["diff.mnemonicPrefix", "false"],
  ["diff.relative", "false"],
  ["commit.gpgSign", "false"],
  ["tag.gpgSign", "false"],
  ["log.showSignature", "false"],
  ["merge.verifySignatures", "false"],
  ["gc.auto", "0"],
  ["maintenance.auto", "false"],
  ["protocol.allow", "never"],
  ["submodule.recurse", "false"],
  ["advice.detachedHead", "false"],
];

/** Who commits for the operator: documented in docs/CONTROL_PLANE.md ("Worktree sessions"). */
export const OPERATOR_COMMITTER = { name: "urlbridge operator", email: "operator@urlbridge.invalid" } as const;

export interface GitResult {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

export interface OwnerGitOptions {
  /** The repository's filter drivers, turned off (clean, smudge, process) for a command that touches files. */
  filters?: string[];
  /** The project owner when the bridge is root (sandbox.identityFor); undefined: the bridge's own user. */
  identity?: Identity | undefined;
  /** GIT_AUTHOR_* / GIT_COMMITTER_* for a command that commits. */
  author?: { name: string; email: string };
  /** Exit codes other than 0 that are answers (merge-tree's 1: conflicts). */
  accept?: number[];
}

function settingsEnv(cwd: string, filters: string[]): Record<string, string> {
  const settings: Array<[string, string]> = [
    ...SAFE_SETTINGS,
    ["safe.directory", cwd],
    ...filters.flatMap((name): Array<[string, string]> =>
      ["clean", "smudge", "process"].map((kind) => [`filter.${name}.${kind}`, ""]),
    ),
  ];
  const env: Record<string, string> = { GIT_CONFIG_COUNT: String(settings.length) };
  settings.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  return env;
}

function baseEnv(cwd: string, options: OwnerGitOptions): Record<string, string> {
  const { env } = buildChildEnv();
  for (const name of Object.keys(env)) if (name.startsWith("GIT_")) delete env[name];
  const author = options.author ?? OPERATOR_COMMITTER;
  return {
    ...env,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_TERMINAL_PROMPT: "0",
    GIT_NO_LAZY_FETCH: "1",
    GIT_LITERAL_PATHSPECS: "1",
    GIT_AUTHOR_NAME: author.name,
    GIT_AUTHOR_EMAIL: author.email,
    GIT_COMMITTER_NAME: OPERATOR_COMMITTER.name,
    GIT_COMMITTER_EMAIL: OPERATOR_COMMITTER.email,
    LC_ALL: "C",
    ...settingsEnv(cwd, options.filters ?? []),
  };
}

/** Runs `git args` in `cwd`; throws git_failed for a failure unless its exit code is accepted. */
export async function ownerGit(cwd: string, args: string[], options: OwnerGitOptions = {}): Promise<GitResult> {
  const git = gitBinary();
  if (!git) throw new WorktreeError(WorktreeErrorCode.gitFailed, "git is not installed on the bridge's machine.");
  const child = spawn(git, args, {
    cwd,
    env: baseEnv(cwd, options),
    stdio: ["ignore", "pipe", "pipe"],
    ...(options.identity ? { uid: options.identity.uid, gid: options.identity.gid } : {}),
  });
  const chunks: Buffer[] = [];
  let size = 0;
  let overflow = false;
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    size += chunk.length;
    if (size > MAX_OWNER_GIT_OUTPUT_BYTES) {
      if (!overflow) child.kill("SIGKILL");
      overflow = true;
    } else chunks.push(chunk);
  });
  child.stderr.on("data", (chunk: Buffer) => {
    if (stderr.length < MAX_STDERR_BYTES) stderr += chunk.toString("utf8");
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill("SIGKILL");
  }, OWNER_GIT_TIMEOUT_MS);
  const code = await new Promise<number | null>((resolve) => {
    child.once("error", () => resolve(null));
    child.once("close", (exit) => resolve(exit));
  }).finally(() => clearTimeout(timer));
  const result = { code, stdout: Buffer.concat(chunks), stderr };
  if (overflow)
    throw new WorktreeError(WorktreeErrorCode.gitFailed, `git's answer to "${args[0]}" is too large to show here.`);
  if (timedOut) throw new WorktreeError(WorktreeErrorCode.gitFailed, `git ${args[0]} took too long and was stopped.`);
  if (code !== 0 && !(code !== null && options.accept?.includes(code))) {
    const line = stderr.split("\n").find((l) => l.trim() !== "") ?? `exit code ${String(code)}`;
    throw new WorktreeError(WorktreeErrorCode.gitFailed, `git ${args[0]} failed: ${line.slice(0, 300)}`);
  }
  return result;
}

/** The text of a successful command's stdout, trimmed. */
export async function ownerGitText(cwd: string, args: string[], options: OwnerGitOptions = {}): Promise<string> {
  return (await ownerGit(cwd, args, options)).stdout.toString("utf8").trim();
}

/** Names of the repository's configured drivers of one kind ("filter", "merge") that would run a program. */
export async function configuredDrivers(cwd: string, kind: "filter" | "merge", options: OwnerGitOptions = {}) {
  const output = await ownerGit(cwd, ["config", "-z", "--name-only", "--get-regexp", `^${kind}\\.`], {
    ...options,
    accept: [1],
  });
  const names = new Set<string>();
  for (const key of output.stdout.toString("utf8").split("\0")) {
    const match = new RegExp(`^${kind}\\.(.+)\\.([^.]+)$`, "s").exec(key);
    if (match && (kind === "filter" || match[2] === "driver")) names.add(match[1]!);
  }
  return [...names];
}
