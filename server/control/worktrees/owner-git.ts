// Runs git for an operator action on a project's repository (creating, removing and pruning worktrees; merges build
// on it): as the project folder's owner, like other operator actions that write project files (writability.ts),
// bounded in time and output. Nothing the repository configures may start a program: hooks, the fsmonitor and every
// filter driver are turned off in command-line scope, which outranks .git/config (an agent may have written it).
import { spawn } from "node:child_process";
import type { Identity } from "../../sandbox/identity.js";

/** A worktree add checks out a whole tree; a slow disk must still not hold the request for ever. */
export const OWNER_GIT_TIMEOUT_MS = 120_000;
/** Most output kept (branch lists, porcelain worktree lists); past it the command is ended and fails. */
const MAX_OUTPUT_BYTES = 4 * 1024 * 1024;
const MAX_STDERR_CHARS = 8 * 1024;

export interface OwnerGitOptions {
  /** Where git runs (the main repository's root, or a worktree). */
  cwd: string;
  /** Who git runs as; undefined: the bridge's own user (it is not root, or the owner is the bridge). */
  identity: Identity | undefined;
  /** Extra environment (GIT_DIR and GIT_WORK_TREE to pin the repository instead of trusting a `.git` file). */
  env?: Record<string, string>;
}

export interface OwnerGitResult {
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/** Settings no repository can override here: git itself is the only program that runs. */
const SAFE_SETTINGS: Array<[string, string]> = [
  ["core.hooksPath", "/dev/null"],
  ["core.fsmonitor", "false"],
  ["core.pager", "cat"],
  ["core.quotePath", "false"],
  ["color.ui", "false"],
  ["protocol.allow", "never"],
  ["submodule.recurse", "false"],
  // git status and diff spawn a nested repository's own git for each gitlink, and that git reads the nested config,
  // whose filters nobody turned off (an agent's `git init sub` in its worktree): never entered. .gitmodules'
  // submodule.<name>.ignore outranks these, so the status runs also pass --ignore-submodules=all (branch-review.ts).
  ["diff.ignoreSubmodules", "all"],
  ["status.submoduleSummary", "false"],
  ["fetch.recurseSubmodules", "false"],
  ["safe.directory", "*"],
  // Merges and squashes commit (commit-tree, merge): no signing program, no automatic gc after them.
  ["commit.gpgSign", "false"],
  ["gc.auto", "0"],
  ["maintenance.auto", "false"],
];

function baseEnv(extra: Record<string, string>, settings: Array<[string, string]>): Record<string, string> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: process.env.HOME ?? "/",
    LC_ALL: "C",
    GIT_TERMINAL_PROMPT: "0",
    GIT_NO_LAZY_FETCH: "1",
    // The bridge's user's ~/.gitconfig is not the owner's (and not readable to them: git would stop on it).
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_CONFIG_COUNT: String(settings.length),
  };
  settings.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  return { ...env, ...extra };
}

function spawnGit(
  args: string[],
  options: OwnerGitOptions,
  settings: Array<[string, string]>,
): Promise<OwnerGitResult> {
  const self = process.getuid?.();
  const switchTo = options.identity && options.identity.uid !== self ? options.identity : undefined;
  return new Promise((resolve) => {
    const child = spawn("git", args, {
      cwd: options.cwd,
      env: baseEnv(options.env ?? {}, settings),
      stdio: ["ignore", "pipe", "pipe"],
      ...(switchTo ? { uid: switchTo.uid, gid: switchTo.gid } : {}),
    });
    let stdout = "";
    let stderr = "";
    let size = 0;
    let timedOut = false;
    child.stdout.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_OUTPUT_BYTES) child.kill("SIGKILL");
      else stdout += chunk.toString("utf8");
    });
    child.stderr.on("data", (chunk: Buffer) => {
      if (stderr.length < MAX_STDERR_CHARS) stderr += chunk.toString("utf8");
    });
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, OWNER_GIT_TIMEOUT_MS);
    child.once("error", (error) => {
      clearTimeout(timer);
      resolve({ code: null, stdout, stderr: stderr || error.message, timedOut });
    });
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code: size > MAX_OUTPUT_BYTES ? null : code, stdout, stderr: stderr.trim(), timedOut });
    });
  });
}

/** The repository's filter drivers, each turned off (a smudge filter would run a program on checkout). */
async function filterSettings(options: OwnerGitOptions): Promise<Array<[string, string]>> {
  const listed = await spawnGit(["config", "-z", "--name-only", "--get-regexp", "^filter\\."], options, SAFE_SETTINGS);
  const names = new Set<string>();
  for (const key of listed.code === 0 ? listed.stdout.split("\0") : []) {
    const match = /^filter\.(.+)\.[^.]+$/s.exec(key);
    if (match) names.add(match[1]!);
  }
  return [...names].flatMap((name): Array<[string, string]> => [
    ...["clean", "smudge", "process"].map((kind): [string, string] => [`filter.${name}.${kind}`, ""]),
    [`filter.${name}.required`, "false"],
  ]);
}

/** Runs `git <args>` as the owner; `checksOut`: the command writes a working tree, so filter drivers go off first. */
export async function runOwnerGit(
  args: string[],
  options: OwnerGitOptions,
  checksOut = false,
): Promise<OwnerGitResult> {
  const settings = checksOut ? [...SAFE_SETTINGS, ...(await filterSettings(options))] : SAFE_SETTINGS;
  return spawnGit(args, options, settings);
}
