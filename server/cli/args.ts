// Parses `urlbridge <command> [subcommand] [args] [--flags]` with node:util, and rejects flags that
// do not belong to the command instead of ignoring them.
import { parseArgs } from "node:util";
import { usageError } from "./cli-error.js";

export const USAGE = `urlbridge — safe, auditable hands on a project folder for URL-fetching agents

Usage:
  urlbridge [serve]                                  start the bridge (control and data planes)
  urlbridge token [--show]                           where the operator token lives; --show prints it
  urlbridge project add <name> <root> [--write] [--terminal] [--web]
  urlbridge project list
  urlbridge project edit <project> [--permissions <write,terminal,web|none>] [--name <new-name>]
  urlbridge project remove <project>                 ends its sessions; the folder itself is untouched
  urlbridge session create <project-name-or-id> [--name <name>] [--worktree [--base <branch>] [--branch <name>]]
  urlbridge session list
  urlbridge session rotate|enable|disable|delete <session-name-or-id>
  urlbridge session rename <session-name-or-id> <new-name>
                                                     same id and URLs; stdio MCP configs naming it need the new name
  urlbridge mcp --session <session-name-or-id>       MCP over stdio for a local client (relays to the bridge)
      [--state-dir <dir>] [--control-url <url>]      ... finding the bridge without URLBRIDGE_* variables
  urlbridge changes <session> [--intent <callId>] [--path <p>]
                                                     a session's changed files; with --intent/--path the exact diff
  urlbridge revert <session> (--intent <callId> | --path <p> | --all) [--force]
                                                     undo a session's changes (refuses later changes unless --force)
  urlbridge worktree show <session> [--path <p>]    a worktree session's branch against its base; --path: its diff
  urlbridge worktree merge <session> [--mode auto|merge|squash]
                                                     merge its branch into its base (auto: fast-forward when possible)
  urlbridge worktree keep|discard <session>          keep its branch, or remove its worktree and branch
  urlbridge backup <file>                            online copy of the state database (- for stdout), safe while running
  urlbridge restore <file> [--key <capability-key>]  install a backup; the bridge must be stopped (deploy/UPGRADE.md)
  urlbridge help | --version

Options:
  --json   print machine-readable JSON instead of text (token, project, session, changes, revert, worktree)

The CLI finds the control plane and the operator token through the same URLBRIDGE_* variables
and state directory as the server (URLBRIDGE_CONTROL_HOST/PORT, URLBRIDGE_OPERATOR_TOKEN,
URLBRIDGE_STATE_DIR). From a checkout: npx urlbridge session create <project>.
In Docker: docker compose exec bridge urlbridge session create <project>
(and for MCP clients: docker compose exec -T bridge urlbridge mcp --session <name>)`;

const OPTIONS = {
  json: { type: "boolean" },
  show: { type: "boolean" },
  write: { type: "boolean" },
  terminal: { type: "boolean" },
  web: { type: "boolean" },
  name: { type: "string" },
  permissions: { type: "string" },
  session: { type: "string" },
  key: { type: "string" },
  intent: { type: "string" },
  path: { type: "string" },
  all: { type: "boolean" },
  force: { type: "boolean" },
  mode: { type: "string" },
  worktree: { type: "boolean" },
  base: { type: "string" },
  branch: { type: "string" },
  "state-dir": { type: "string" },
  "control-url": { type: "string" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean" },
} as const;

export type Flag = keyof typeof OPTIONS;

export interface ParsedCommand {
  /** e.g. "serve", "token", "project add", "session rotate". */
  command: string;
  args: string[];
  flags: {
    json: boolean;
    show: boolean;
    write: boolean;
    terminal: boolean;
    web: boolean;
    name: string | undefined;
    /** `project edit`: the permissions that are on afterwards (`write,terminal`, or `none`). */
    permissions: string | undefined;
    session: string | undefined;
    key: string | undefined;
    /** `changes`, `revert`: a call id, a file, every file, overwrite later changes. */
    intent: string | undefined;
    path: string | undefined;
    all: boolean;
    force: boolean;
    /** `worktree merge`: auto (default), merge or squash. */
    mode: string | undefined;
    /** `session create`: its own git worktree, from `base` (default: the project's current branch) on `branch`. */
    worktree: boolean;
    base: string | undefined;
    branch: string | undefined;
    /** `mcp`: the bridge's state dir, in place of URLBRIDGE_STATE_DIR (MCP clients start the relay without our environment). */
    stateDir: string | undefined;
    /** `mcp`: the control plane's URL, in place of URLBRIDGE_CONTROL_HOST/PORT. */
    controlUrl: string | undefined;
  };
}

/** Which flags and how many positional arguments each command accepts. */
const COMMANDS: Record<string, { flags: Flag[]; args: string[] }> = {
  serve: { flags: [], args: [] },
  help: { flags: [], args: [] },
  version: { flags: [], args: [] },
  token: { flags: ["show", "json"], args: [] },
  "project add": { flags: ["write", "terminal", "web", "json"], args: ["<name>", "<root>"] },
  "project list": { flags: ["json"], args: [] },
  "project edit": { flags: ["permissions", "name", "json"], args: ["<project>"] },
  "project remove": { flags: ["json"], args: ["<project>"] },
  "session create": { flags: ["name", "worktree", "base", "branch", "json"], args: ["<project-name-or-id>"] },
  "session list": { flags: ["json"], args: [] },
  "session rotate": { flags: ["json"], args: ["<session-id>"] },
  "session enable": { flags: ["json"], args: ["<session>"] },
  "session disable": { flags: ["json"], args: ["<session>"] },
  "session delete": { flags: ["json"], args: ["<session>"] },
  "session rename": { flags: ["json"], args: ["<session>", "<new-name>"] },
  mcp: { flags: ["session", "state-dir", "control-url"], args: [] },
  backup: { flags: ["json"], args: ["<file>"] },
  restore: { flags: ["key", "json"], args: ["<file>"] },
  changes: { flags: ["intent", "path", "json"], args: ["<session>"] },
  revert: { flags: ["intent", "path", "all", "force", "json"], args: ["<session>"] },
  "worktree show": { flags: ["path", "json"], args: ["<session>"] },
  "worktree merge": { flags: ["mode", "json"], args: ["<session>"] },
  "worktree keep": { flags: ["json"], args: ["<session>"] },
  "worktree discard": { flags: ["json"], args: ["<session>"] },
};

const GROUPS = new Set(["project", "session", "worktree"]);

export function parseCommandLine(argv: string[]): ParsedCommand {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw usageError((error as Error).message.split("\n")[0]!.replace(/\.$/, ""));
  }
  const { values, positionals } = parsed;
  if (values.help) return build("help", [], values);
  if (values.version) return build("version", [], values);
  const [first = "serve", second, ...rest] = positionals;
  const grouped = GROUPS.has(first);
  const command = grouped ? `${first} ${second ?? ""}`.trim() : first;
  const args = grouped ? rest : positionals.slice(1);
  const spec = COMMANDS[command];
  if (!spec) {
    if (grouped) throw usageError(second ? `unknown command "${command}"` : `"${first}" needs a subcommand`);
    throw usageError(`unknown command "${first}"`);
  }
  const given = (Object.keys(values) as Flag[]).filter((f) => values[f] !== undefined);
  const stray = given.find((f) => !spec.flags.includes(f));
  if (stray) throw usageError(`--${stray} does not apply to "urlbridge ${command}"`);
  if (args.length !== spec.args.length) {
    const wanted = spec.args.length === 0 ? "no arguments" : spec.args.join(" ");
    throw usageError(
      `"urlbridge ${command}" takes ${wanted}; got ${args.length === 0 ? "none" : JSON.stringify(args.join(" "))}`,
    );
  }
  return build(command, args, values);
}

function build(command: string, args: string[], values: Partial<Record<Flag, string | boolean>>): ParsedCommand {
  return {
    command,
    args,
    flags: {
      json: values.json === true,
      show: values.show === true,
      write: values.write === true,
      terminal: values.terminal === true,
      web: values.web === true,
      name: typeof values.name === "string" ? values.name : undefined,
      permissions: typeof values.permissions === "string" ? values.permissions : undefined,
      session: typeof values.session === "string" ? values.session : undefined,
      key: typeof values.key === "string" ? values.key : undefined,
      intent: typeof values.intent === "string" ? values.intent : undefined,
      path: typeof values.path === "string" ? values.path : undefined,
      all: values.all === true,
      force: values.force === true,
      mode: typeof values.mode === "string" ? values.mode : undefined,
      worktree: values.worktree === true,
      base: typeof values.base === "string" ? values.base : undefined,
      branch: typeof values.branch === "string" ? values.branch : undefined,
      stateDir: typeof values["state-dir"] === "string" ? values["state-dir"] : undefined,
      controlUrl: typeof values["control-url"] === "string" ? values["control-url"] : undefined,
    },
  };
}
