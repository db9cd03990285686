// Runs one read-only git command for the version-control tool: as the project's agent identity, under the same
// sandbox launcher as terminal commands but with the project read-only, in a scrubbed environment, bounded in
// time and output. The repository's own configuration cannot make it run a program (see SAFE_CONFIG).
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import type { Readable } from "node:stream";
import { ErrorCode, ToolError } from "../../errors.js";
import { buildChildEnv } from "../../sandbox/env-scrub.js";
import type { ProjectTarget, Sandbox } from "../../sandbox/launcher.js";
import { spawnThroughSpawner, SpawnerLost } from "../../sandbox/spawner.js";
import { GIT_TIMEOUT_MS, MAX_GIT_OUTPUT_BYTES } from "../limits.js";
import { linkedWorktree } from "../../sandbox/git-worktree-link.js";

/** The launcher's exit code when it refused to start the program (native/sandbox/fail.h). */
const LAUNCHER_ERROR = 125;
/** Most stderr kept for the error mapping (git's messages are one or two lines). */
const MAX_STDERR_BYTES = 8 * 1024;

/**
 * Settings given in command-line scope (configEnv), which outranks the repository's .git/config: nothing a repository configures
 * starts a program (fsmonitor hook, external diff, pager, signature check, transport for a lazy fetch), output
 * stays in the shape the parsers read, and the repository is trusted whoever owns it (safe.directory, added per
 * call): git itself is then the only program that runs, read-only under the launcher.
 */
const SAFE_CONFIG = [
  "core.fsmonitor=false",
  "core.hooksPath=/dev/null",
  "commit.gpgSign=false",
  "gc.auto=0",
  "maintenance.auto=false",
  "core.quotePath=false",
  "core.pager=cat",
  "color.ui=false",
  "diff.external=",
  "diff.noprefix=false",
  "diff.mnemonicPrefix=false",
  "diff.relative=false",
  "log.showSignature=false",
  "protocol.allow=never",
  "submodule.recurse=false",
  // A nested repository's own git (git status spawns one per gitlink) reads that repository's config, whose filters
  // nobody turned off: never entered. .gitmodules' submodule.<name>.ignore outranks this, so status and diff runs
  // also say --ignore-submodules=all, and git_commit refuses gitlinks (mutation/vcs/commit.ts).
  "diff.ignoreSubmodules=all",
  "status.submoduleSummary=false",
  "fetch.recurseSubmodules=false",
];

export interface GitOutput {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

export interface GitRunOptions {
  /** Filter drivers of this repository to turn off for this command (git-command.ts filterDrivers). */
  filters?: string[];
  maxBytes?: number;
  signal: AbortSignal;
  /**
   * The command writes (git_commit): the project read-write, and a linked worktree's main git folder too, since
   * objects and the branch's ref live there. Default: read-only.
   */
  write?: boolean;
  /** Added to git's environment (the author and committer of a commit). */
  env?: Record<string, string>;
}

export interface GitRunner {
  run(project: ProjectTarget, args: string[], options: GitRunOptions): Promise<GitOutput>;
}

let cachedGit: string | null | undefined;

/** git's real path on the bridge's PATH, or undefined when it is not installed. Cached per process. */
export function gitBinary(): string | undefined {
  if (cachedGit === undefined) {
    cachedGit = null;
    for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
      const candidate = dir && path.join(dir, "git");
      if (candidate && fs.existsSync(candidate)) {
        cachedGit = fs.realpathSync(candidate);
        break;
      }
    }
  }
  return cachedGit ?? undefined;
}

/** GIT_* variables of the bridge (GIT_DIR, GIT_WORK_TREE...) would point git elsewhere: never passed on. */
function gitEnv(root: string, planEnv: Record<string, string>, gitDir: string | undefined): Record<string, string> {
  const { env } = buildChildEnv();
  for (const name of Object.keys(env)) if (name.startsWith("GIT_")) delete env[name];
  return {
    ...env,
    ...planEnv,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_OPTIONAL_LOCKS: "0",
    GIT_TERMINAL_PROMPT: "0",
    GIT_NO_LAZY_FETCH: "1",
    // Paths the agent names are paths, never pathspec magic or globs.
    GIT_LITERAL_PATHSPECS: "1",
    // Only the project folder itself may be the repository: never one in a folder above it.
    GIT_CEILING_DIRECTORIES: path.dirname(root),
    // The working tree is the project folder, whatever core.worktree in .git/config says (it outranks that).
    GIT_WORK_TREE: root,
    // A linked worktree's git folder as verified (git-worktree-link.ts): git never reads the `.git` file itself.
    ...(gitDir ? { GIT_DIR: gitDir } : {}),
    LC_ALL: "C",
  };
}

/**
 * The settings as GIT_CONFIG_COUNT/KEY/VALUE variables (command-line scope, as -c): a key and its value stay
 * apart, so a driver named "x=y" cannot split `-c filter.x=y.clean=` into another key and keep its filter.
 */
function configEnv(root: string, filters: string[]): Record<string, string> {
  const settings: Array<[string, string]> = [
    ...SAFE_CONFIG.map((s): [string, string] => [s.slice(0, s.indexOf("=")), s.slice(s.indexOf("=") + 1)]),
    ["safe.directory", root],
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

interface Started {
  stdout: Readable;
  stderr: Readable;
  kill(): void;
  exited: Promise<number | null>;
}

async function start(file: string, args: string[], cwd: string, env: Record<string, string>): Promise<Started> {
  try {
    const resident = await spawnThroughSpawner({ file, args, cwd, env });
    if (resident) {
      return {
        stdout: resident.stdout,
        stderr: resident.stderr,
        kill: () => resident.kill("SIGKILL"),
        exited: resident.exited.then((exit) => (exit.lost ? null : exit.code)),
      };
    }
  } catch (error) {
    if (!(error instanceof SpawnerLost)) throw error;
  }
  const child = spawn(file, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  return {
    stdout: child.stdout,
    stderr: child.stderr,
    kill: () => child.kill("SIGKILL"),
    exited: new Promise((resolve) => {
      child.once("error", () => resolve(null));
      child.once("close", (code) => resolve(code));
    }),
  };
}

const closed = (stream: Readable) =>
  new Promise<void>((resolve) => (stream.destroyed ? resolve() : stream.once("close", () => resolve())));

function isGitFolder(root: string): boolean {
  try {
    return fs.lstatSync(path.join(root, ".git")).isDirectory();
  } catch {
    return false;
  }
}

function gitFailed(message: string, reason: string): ToolError {
  return new ToolError(ErrorCode.gitFailed, message, { detail: { reason }, retryable: reason === "timeout" });
}

export function createGitRunner(sandbox: Sandbox | undefined): GitRunner {
  return {
    async run(project, args, options) {
      const git = gitBinary();
      if (!git)
        throw gitFailed("git is not installed on the bridge's machine; the operator must install it.", "no_git");
      const link = linkedWorktree(project.root);
      // A commit writes the main git folder only through a link verified here and pinned (GIT_DIR): a `.git` file that
      // does not hold up (rewritten to name the main repository's own .git) gets no commit at all.
      if (options.write && !link && !isGitFolder(project.root)) {
        throw gitFailed(
          "The worktree's .git file no longer links it to its repository, so git cannot commit here; ask the operator to repair the worktree (git worktree repair in the project).",
          "worktree_unlinked",
        );
      }
      const extra = link ? [link.common] : [];
      const plan = options.write
        ? sandbox?.plan(project, "", true, [], "rw", extra)
        : sandbox?.plan(project, "", true, extra, "ro");
      const gitArgv = [git, ...args];
      const env = {
        ...gitEnv(project.root, plan?.env ?? {}, link?.gitDir),
        ...configEnv(project.root, options.filters ?? []),
        ...options.env,
      };
      const started = plan
        ? await start(plan.file, [...plan.args, "--", ...gitArgv], plan.spawnCwd, env)
        : await start(git, gitArgv.slice(1), project.root, env);
      const maxBytes = options.maxBytes ?? MAX_GIT_OUTPUT_BYTES;
      const chunks: Buffer[] = [];
      let size = 0;
      let overflow = false;
      let stderr = "";
      started.stdout.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBytes) {
          if (!overflow) started.kill();
          overflow = true;
          return;
        }
        chunks.push(chunk);
      });
      started.stderr.on("data", (chunk: Buffer) => {
        if (stderr.length < MAX_STDERR_BYTES) stderr += chunk.toString("utf8");
      });
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        started.kill();
      }, GIT_TIMEOUT_MS);
      const abort = () => started.kill();
      options.signal.addEventListener("abort", abort, { once: true });
      let code: number | null;
      try {
        [code] = await Promise.all([started.exited, closed(started.stdout), closed(started.stderr)]);
      } finally {
        clearTimeout(timer);
        options.signal.removeEventListener("abort", abort);
      }
      if (overflow) {
        throw new ToolError(
          ErrorCode.gitOutputTooLarge,
          `git's answer is over ${maxBytes / (1024 * 1024)} MiB; narrow it with path= (one file or folder) or a closer revision.`,
          { detail: { maxBytes } },
        );
      }
      if (timedOut)
        throw gitFailed(
          `git took longer than ${GIT_TIMEOUT_MS / 1000} s and was stopped; narrow the request with path=.`,
          "timeout",
        );
      if (options.signal.aborted) throw gitFailed("The bridge is shutting down; git was stopped.", "shutdown");
      if (code === LAUNCHER_ERROR && stderr.startsWith("urlbridge-sandbox: ")) {
        throw new ToolError(ErrorCode.sandboxUnavailable, `The sandbox could not start git: ${stderr.split("\n")[0]}`, {
          retryable: false,
          agentAction: "enable_in_control_plane",
        });
      }
      return { code, stdout: Buffer.concat(chunks), stderr };
    },
  };
}
