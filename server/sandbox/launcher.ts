// How terminal commands (and ripgrep) are confined: finds the urlbridge-sandbox launcher, probes once what the
// kernel offers, picks the mode from URLBRIDGE_SANDBOX and builds the launcher's arguments for one project.
// The launcher itself (native/urlbridge-sandbox.c, its parts in native/sandbox/) applies Landlock, drops identity
// and owns the process tree.
import { execFile, execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Config } from "../config.js";
import { ErrorCode, ToolError } from "../errors.js";
import { agentIdentity, bridgeIsRoot, type Identity } from "./identity.js";
import { buildAllowlist } from "./launcher-paths.js";

const here = path.dirname(fileURLToPath(import.meta.url));
/** server/sandbox/ in development, dist/server/sandbox/ when built: both find <repo>/dist/native/. */
const CANDIDATES = [
  path.resolve(here, "../../dist/native/urlbridge-sandbox"),
  path.resolve(here, "../../native/urlbridge-sandbox"),
];

/** What `urlbridge-sandbox --probe` reports about this kernel and process. */
export interface LauncherProbe {
  landlock: number;
  fs: boolean;
  ptrace: boolean;
  net: boolean;
  signals: boolean;
  /** Landlock can scope abstract Unix sockets (ABI 6); absent from a launcher built before it asked. */
  abstractSockets?: boolean;
  /** The launcher raises its commands' oom_score_adj and takes --max-file-size; absent from one built before. */
  agentLimits?: boolean;
  root: boolean;
}

let cachedBinary: string | null | undefined;
let cachedProbe: LauncherProbe | null | undefined;

/** The launcher binary, or undefined when it was not built (no C compiler, or not Linux). Cached. */
export function launcherBinary(): string | undefined {
  if (cachedBinary === undefined) cachedBinary = CANDIDATES.find((p) => fs.existsSync(p)) ?? null;
  return cachedBinary ?? undefined;
}

const PROBE_ARGS = ["--probe"];
const PROBE_OPTIONS = { encoding: "utf8", timeout: 5000 } as const;

/** Runs the probe once per process; undefined when the launcher is missing or fails. */
export function probeLauncher(): LauncherProbe | undefined {
  if (cachedProbe !== undefined) return cachedProbe ?? undefined;
  const binary = launcherBinary();
  cachedProbe = null;
  if (binary) {
    try {
      cachedProbe = JSON.parse(execFileSync(binary, PROBE_ARGS, PROBE_OPTIONS)) as LauncherProbe;
    } catch {
      cachedProbe = null;
    }
  }
  return cachedProbe ?? undefined;
}

/**
 * The same probe without blocking: start-up starts it early and awaits it before the first status(), so the
 * launcher runs while the store opens instead of stopping the event loop for its spawn. Never rejects; caches
 * what probeLauncher() would have (a probe that fails or prints no JSON is undefined, and its stderr is passed
 * through as execFileSync does).
 */
export function probeLauncherInBackground(): Promise<LauncherProbe | undefined> {
  if (cachedProbe !== undefined) return Promise.resolve(cachedProbe ?? undefined);
  const binary = launcherBinary();
  if (!binary) return Promise.resolve(probeLauncher());
  return new Promise((resolve) => {
    execFile(binary, PROBE_ARGS, PROBE_OPTIONS, (error, stdout, stderr) => {
      if (stderr) process.stderr.write(stderr);
      if (cachedProbe === undefined) {
        try {
          cachedProbe = error ? null : (JSON.parse(stdout) as LauncherProbe);
        } catch {
          cachedProbe = null;
        }
      }
      resolve(cachedProbe ?? undefined);
    });
  });
}

/** What is enforced on terminal commands, as /api/health and the UI show it. */
export interface SandboxStatus {
  /** landlock: confined; none: not confined (opt-out, or auto without Landlock); unavailable: landlock required but missing. */
  mode: "landlock" | "none" | "unavailable";
  configured: Config["sandbox"];
  landlockAbi: number;
  /** Commands see only their project, its scratch folder and read-only system folders. */
  filesystem: boolean;
  /** The bridge's /proc/<pid>/environ and memory are closed to commands. */
  procProtection: boolean;
  /** Commands cannot signal the bridge (or another command's processes). */
  signals: boolean;
  /**
   * Commands cannot connect to an abstract Unix socket (@name) made outside their sandbox: the bridge's, Docker's
   * CLI's, any other process's in the same network namespace. Such sockets have no file permission to check.
   */
  abstractSockets: boolean;
  /** Outgoing connections are restricted (never by default: agents install packages). */
  network: boolean;
  /** Commands run as the project's owner, not as the bridge's user. */
  identitySeparation: boolean;
  /** One project's commands cannot touch another project's files. */
  perProjectIsolation: boolean;
  /** Set when something the operator should know about is not enforced. */
  warning?: string;
}

/** How one command is started: the launcher and its arguments (the shell and command follow). */
export interface LaunchPlan {
  file: string;
  args: string[];
  /** Added to the child's environment: HOME and TMPDIR in the project's scratch folder. */
  env: Record<string, string>;
  /** The spawn cwd; the launcher walks to the command's cwd itself. */
  spawnCwd: string;
}

export interface SandboxOptions {
  config: Pick<Config, "sandbox" | "scratchDir" | "agentFallback" | "stateDir"> & {
    /** RLIMIT_FSIZE for commands (URLBRIDGE_AGENT_MAX_FILE_MB); absent or 0: the inherited limit. */
    agentLimits?: Pick<Config["agentLimits"], "maxFileBytes">;
  };
  /** The bridge's code (PACKAGE_ROOT): never readable by commands. */
  codeDir: string;
  /** Every registered project's root, to keep each project out of the others' sandboxes. */
  projectRoots: () => string[];
  /** Called once when the mode is decided without Landlock (the bridge logs it). */
  warn?: (message: string) => void;
}

export interface ProjectTarget {
  id: string;
  root: string;
}

export interface Sandbox {
  status(): SandboxStatus;
  /**
   * The launch plan for a command in `project`, at cwd `cwdRelative` below its root; undefined when the
   * launcher is missing and the mode allows an unconfined bare spawn. Throws when the command is refused.
   * `projectAccess` "ro" gives the command the project read-only (the version-control read tools);
   * `extraReadWrite` adds folders it may change (git_commit: the main repository's git folder of a worktree).
   */
  plan(
    project: ProjectTarget,
    cwdRelative: string,
    foreground: boolean,
    extraReadOnly?: string[],
    projectAccess?: "rw" | "ro",
    extraReadWrite?: string[],
  ): LaunchPlan | undefined;
  /** The identity commands of this project run as, or undefined when it is the bridge's own. */
  identityFor(projectRoot: string): Identity | undefined;
  /** Removes a deleted project's scratch folder. */
  removeScratch(projectId: string): void;
}

/** A status's guarantees when nothing confines commands (no launcher, no Landlock, or URLBRIDGE_SANDBOX=none). */
const UNCONFINED = {
  filesystem: false,
  procProtection: false,
  signals: false,
  abstractSockets: false,
  identitySeparation: false,
  perProjectIsolation: false,
} satisfies Partial<SandboxStatus>;

function decideStatus(config: SandboxOptions["config"], probe: LauncherProbe | undefined): SandboxStatus {
  const abi = probe?.landlock ?? 0;
  const root = bridgeIsRoot();
  const wanted = config.sandbox === "container" ? "auto" : config.sandbox;
  const base = { configured: config.sandbox, landlockAbi: abi, network: false };
  if (wanted === "none") {
    return {
      ...base,
      mode: "none",
      ...UNCONFINED,
      warning:
        "URLBRIDGE_SANDBOX=none: terminal commands run unconfined as the bridge's user and can read its state, token and environment.",
    };
  }
  if (abi === 0) {
    const why = probe ? `this kernel has no Landlock` : `the sandbox launcher is missing (run npm run build:native)`;
    // Without the launcher nothing can change identity either: the shell is spawned bare.
    const separated = root && probe !== undefined;
    if (wanted === "landlock") {
      return {
        ...base,
        mode: "unavailable",
        ...UNCONFINED,
        warning: `URLBRIDGE_SANDBOX=landlock but ${why}: terminal commands are refused.`,
      };
    }
    return {
      ...base,
      mode: "none",
      ...UNCONFINED,
      procProtection: separated,
      signals: separated,
      identitySeparation: separated,
      warning: `Terminal commands are not confined: ${why}. ${separated ? "They run as the project owner, not root." : "They run as the bridge's user and can reach everything it can."}`,
    };
  }
  const abstractSockets = Boolean(probe?.abstractSockets);
  // Landlock's scopes came with ABI 6 (Linux 6.12): below it, say what commands can still reach.
  const unscoped = [
    ...(probe?.signals ? [] : [`signals${root ? "" : " (commands can signal the bridge)"}`]),
    ...(abstractSockets
      ? []
      : ["abstract Unix sockets (commands can connect to any @socket in the bridge's network namespace)"]),
  ];
  return {
    ...base,
    mode: "landlock",
    filesystem: true,
    procProtection: true,
    signals: Boolean(probe?.signals) || root,
    abstractSockets,
    identitySeparation: root,
    perProjectIsolation: true,
    ...(unscoped.length === 0
      ? {}
      : { warning: `Landlock ABI ${abi} cannot scope ${unscoped.join(" or ")}; that needs ABI 6, Linux 6.12.` }),
  };
}

/** Read-only folders of the tools commands expect: node's installation and ripgrep's. Found once per process (PATH and node's own path do not change under it). */
let cachedToolDirs: string[] | undefined;
function toolDirs(): string[] {
  if (cachedToolDirs) return cachedToolDirs;
  const dirs = [path.dirname(path.dirname(fs.realpathSync(process.execPath)))];
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    const rg = path.join(dir, "rg");
    if (dir && fs.existsSync(rg)) {
      dirs.push(path.dirname(fs.realpathSync(rg)));
      break;
    }
  }
  cachedToolDirs = dirs;
  return dirs;
}

/** The scratch base: ours, not a symlink, traversable by agent identities but not listable (0711 as root). */
function ensureScratchBase(dir: string): void {
  const mode = bridgeIsRoot() ? 0o711 : 0o700;
  fs.mkdirSync(dir, { recursive: true, mode });
  const stat = fs.lstatSync(dir);
  const me = typeof process.getuid === "function" ? process.getuid() : stat.uid;
  if (stat.isDirectory() && stat.uid === me && (stat.mode & 0o777) !== mode) fs.chmodSync(dir, mode);
  if (!stat.isDirectory() || stat.uid !== me) {
    throw new ToolError(
      ErrorCode.sandboxUnavailable,
      `The scratch folder ${dir} is not a directory owned by the bridge; remove it or set URLBRIDGE_SCRATCH_DIR elsewhere.`,
      {
        retryable: false,
        agentAction: "enable_in_control_plane",
      },
    );
  }
}

export function createSandbox(options: SandboxOptions): Sandbox {
  const { config } = options;
  let decided: SandboxStatus | undefined;
  const status = () => {
    if (!decided) {
      decided = decideStatus(config, probeLauncher());
      if (decided.warning) options.warn?.(decided.warning);
    }
    return decided;
  };

  function identityFor(projectRoot: string): Identity | undefined {
    if (status().mode === "none" && config.sandbox === "none") return undefined;
    const owner = fs.statSync(projectRoot);
    return agentIdentity({ uid: owner.uid, gid: owner.gid }, config.agentFallback);
  }

  function scratchFor(projectId: string, identity: Identity | undefined): string {
    ensureScratchBase(config.scratchDir);
    const dir = path.join(config.scratchDir, projectId);
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (identity) {
      const stat = fs.lstatSync(dir);
      if (stat.uid !== identity.uid || stat.gid !== identity.gid) fs.chownSync(dir, identity.uid, identity.gid);
    }
    return dir;
  }

  return {
    status,
    identityFor,
    plan(project, cwdRelative, foreground, extraReadOnly = [], projectAccess = "rw", extraReadWrite = []) {
      const current = status();
      const binary = launcherBinary();
      if (!binary && current.mode === "none") return undefined;
      if (current.mode === "unavailable" || !binary) {
        throw new ToolError(
          ErrorCode.sandboxUnavailable,
          current.warning ?? "The sandbox launcher is missing; the operator must run npm run build:native.",
          {
            detail: { configured: config.sandbox },
            retryable: false,
            agentAction: "enable_in_control_plane",
          },
        );
      }
      const identity = identityFor(project.root);
      const scratch = scratchFor(project.id, identity);
      const args: string[] = [];
      if (current.mode === "landlock") {
        const others = options.projectRoots().filter((r) => r !== project.root);
        const allow = buildAllowlist({
          projectRoot: project.root,
          scratch,
          excluded: [config.stateDir, options.codeDir, config.scratchDir, ...others],
          extraReadOnly: toolDirs(),
          projectReadOnly: projectAccess === "ro",
        });
        for (const p of [...allow.readOnly, ...extraReadOnly]) args.push("--ro", p);
        for (const p of [...allow.readWrite, ...extraReadWrite]) args.push("--rw", p);
        for (const p of allow.devices) args.push("--rw-dev", p);
        args.push("--require-landlock");
        if (probeLauncher()?.signals) args.push("--scope-signals");
        if (probeLauncher()?.abstractSockets) args.push("--scope-abstract-sockets");
      }
      const maxFileBytes = config.agentLimits?.maxFileBytes ?? 0;
      if (maxFileBytes > 0 && probeLauncher()?.agentLimits) args.push("--max-file-size", String(maxFileBytes));
      if (identity) args.push("--uid", String(identity.uid), "--gid", String(identity.gid));
      args.push("--cwd-root", project.root, "--cwd", cwdRelative === "" ? "." : cwdRelative);
      if (foreground) args.push("--foreground");
      return { file: binary, args, env: { HOME: scratch, TMPDIR: scratch }, spawnCwd: "/" };
    },
    removeScratch(projectId) {
      if (!/^[A-Za-z0-9_-]+$/.test(projectId)) return;
      fs.rmSync(path.join(config.scratchDir, projectId), { recursive: true, force: true });
    },
  };
}
