// Refuses a short list of machine-destroying and accident-shaped terminal commands (rm -rf /, rm -rf "$UNSET/"*,
// cd / && rm -rf *, mkfs, shutdown, fork bombs, writes to block devices...). A seatbelt against accidents and
// confused agents, not a security boundary (that is the sandbox): see docs/PROTOCOL.md, "The command guard".
import path from "node:path";
import { ErrorCode, ToolError } from "../errors.js";
import {
  isAbsoluteOrHome,
  isCriticalResolved,
  placeAfterCd,
  readTarget,
  worstCase,
  type KnownVariables,
  type Place,
  type WorstCase,
} from "./guard-paths.js";
import { unwrap, type Unwrapped } from "./guard-unwrap.js";
import { readShell, type SimpleCommand } from "./shell-words.js";

export type GuardRule =
  | "recursive_delete_of_system_path"
  | "possibly_empty_expansion"
  | "recursive_delete_outside_project"
  | "no_preserve_root"
  | "make_filesystem"
  | "power_state"
  | "kill_everything"
  | "fork_bomb"
  | "block_device_write"
  | "recursive_permission_change_of_system_path"
  | "move_system_path"
  | "find_delete_of_system_path"
  | "too_deeply_nested";

/** A refusal says what was refused (`reason`) and how to say the same thing safely (`hint`). */
export type GuardVerdict = { ok: true } | { ok: false; rule: GuardRule; reason: string; hint: string };

export interface GuardContext {
  /** How many directories below the project root the command starts (0: the root, the default). */
  cwdDepth?: number;
}

/** Nested shell text (bash -c '...', eval, $(...)) is inspected to this depth; deeper nesting is refused. */
export const MAX_GUARD_NESTING = 6;

const BLOCK_DEVICE =
  /^\/dev\/(?:sd[a-z]+\d*|hd[a-z]+\d*|vd[a-z]+\d*|xvd[a-z]+\d*|nvme\d+n\d+(?:p\d+)?|mmcblk\d+(?:p\d+)?|md\d+|dm-\d+|loop\d+|sr\d+|mapper\/.+|disk\/.+|mem|kmem|port)$/;
const KERNEL_TRIGGERS = new Set(["/proc/sysrq-trigger"]);

// Linear in the command's length (a long word or run of spaces must not make it backtrack quadratically, which
// froze the event loop for seconds per 64 KiB): the name starts only where a word starts and is taken whole
// (a lookahead capture, JavaScript's atomic group), and no two whitespace runs are adjacent.
const FORK_BOMB = /(?<![\w:.-])(?:function\s+)?(?=([\w:.-]+))\1\s*(?:\(\s*\)\s*)?\{\s*\1\s*\|\s*\1\s*&\s*(?:;\s*)?\}/;

const SHELLS = new Set(["sh", "bash", "dash", "zsh", "ksh", "ash", "mksh"]);
const MKFS = /^(?:mkfs(?:\..+)?|mke2fs|mkswap|wipefs|mkdosfs|mkntfs)$/;
const POWER = new Set(["shutdown", "reboot", "halt", "poweroff", "kexec"]);
const SYSTEMCTL_POWER = new Set([
  "poweroff",
  "reboot",
  "halt",
  "kexec",
  "emergency",
  "rescue",
  "suspend",
  "hibernate",
  "hybrid-sleep",
  "soft-reboot",
]);

const SAFE_PATH_HINT =
  'Name a literal path inside /project (e.g. rm -rf ./build); to delete project files prefer /a with "*** Delete File:".';
const HINTS: Partial<Record<GuardRule, string>> = {
  recursive_delete_of_system_path: SAFE_PATH_HINT,
  possibly_empty_expansion:
    'Write ${VAR:?} so the shell stops when the variable is empty (rm -rf "${DIR:?}"/*), or name a literal path inside /project.',
  recursive_delete_outside_project:
    "Name a path inside /project (e.g. rm -rf ./build), or set cwd= to the directory whose contents you mean.",
  find_delete_of_system_path: "Start find at a directory inside /project (find ./build -name '*.o' -delete).",
  too_deeply_nested: "Flatten the command (fewer bash -c / eval layers) or put it in a script file inside /project.",
};
const AFTER_CD_HINT =
  "Delete by a literal path instead of cd-ing first (rm -rf ./build/*), or set cwd= to a directory inside /project.";
const DEFAULT_HINT =
  "The terminal guard blocks machine-level destructive commands; narrow the target to a path inside /project.";

function refuse(rule: GuardRule, reason: string, hint = HINTS[rule] ?? DEFAULT_HINT): GuardVerdict {
  return { ok: false, rule, reason, hint };
}

/** Root, the home directory, or a top-level system directory (or a glob reaching one), even when a variable in it is empty. */
export function isCriticalPath(input: string): boolean {
  const worst = worstCase(input.trim()).text;
  return isAbsoluteOrHome(worst) && isCriticalResolved(worst);
}

/** The terminal's cwd depth from its display path: "/project" is 0, "/project/a/b" is 2. */
export function cwdDepthOf(display: string): number {
  return Math.max(0, display.split("/").filter(Boolean).length - 1);
}

/** Where the command being read stands: the directory relative paths start from, the variables set so far, and how deep in nested shell text. */
interface Scope {
  place: Place;
  vars: Map<string, WorstCase>;
  depth: number;
}

const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)=([\s\S]*)$/;
const DECLARATIONS = new Set(["export", "readonly", "local", "declare", "typeset"]);

/**
 * Follows what sets shell variables: `D=build` (alone, or after export/local...), `for d in a b` (the worst
 * item: an absolute one if any), `unset D`. Answers true when the command did nothing else.
 */
function trackVariables(words: string[], vars: Map<string, WorstCase>): boolean {
  const first = words[0] ?? "";
  if (first === "for" && words[1] !== undefined) {
    const items = words[2] === "in" ? words.slice(3) : [];
    const readings = items.map((item) => worstCase(item, vars));
    const worst =
      readings.find((r) => isAbsoluteOrHome(r.text)) ?? readings.find((r) => r.text === "" || r.emptied) ?? readings[0];
    vars.set(words[1], worst === undefined || items.length === 0 ? { text: "", emptied: true } : worst);
    return true;
  }
  if (first === "unset") {
    for (const name of words.slice(1)) vars.delete(name);
    return true;
  }
  const declared = DECLARATIONS.has(first) ? words.slice(1).filter((w) => !w.startsWith("-")) : words;
  if (declared.length === 0 || !declared.every((w) => ASSIGNMENT.test(w))) return false;
  for (const word of declared) {
    const [, name, value] = ASSIGNMENT.exec(word)!;
    const reading = worstCase(value!, vars);
    vars.set(name!, { text: reading.text, emptied: reading.emptied || reading.text === "" });
  }
  return true;
}

/**
 * The first operand that lands on /, ~ or a system directory (or, with `outside`, leaves the project), as a
 * refusal of `rule`; `action` is what the command does to it ("recursive rm").
 */
function refuseTarget(
  action: string,
  rule: GuardRule,
  operands: string[],
  place: Place,
  vars: KnownVariables,
  outside: boolean,
): GuardVerdict | undefined {
  for (const operand of operands) {
    const target = readTarget(operand, place, vars);
    if (target.kind === "critical" && target.emptied) {
      return refuse(
        "possibly_empty_expansion",
        `${action} of ${operand} is ${action} of ${target.worst} when a variable in it is empty`,
      );
    }
    if (target.kind === "critical" && target.via !== undefined) {
      return refuse(rule, `${action} of ${operand} after ${target.via} is ${action} of ${target.worst}`, AFTER_CD_HINT);
    }
    if (target.kind === "critical")
      return refuse(rule, `${action} of ${operand} would wipe the machine or the home directory`);
    if (target.kind === "outside" && outside) {
      return refuse(
        "recursive_delete_outside_project",
        `${action} of ${operand} climbs ${target.levels} level${target.levels === 1 ? "" : "s"} above the project root`,
      );
    }
  }
  return undefined;
}

function splitFlags(args: string[]): { flags: string[]; operands: string[] } {
  const flags: string[] = [];
  const operands: string[] = [];
  let endOfFlags = false;
  for (const arg of args) {
    if (!endOfFlags && arg === "--") endOfFlags = true;
    else if (!endOfFlags && arg.startsWith("-") && arg.length > 1) flags.push(arg);
    else operands.push(arg);
  }
  return { flags, operands };
}

const hasShortFlag = (flags: string[], letters: string) =>
  flags.some((f) => !f.startsWith("--") && [...letters].some((l) => f.includes(l)));

/** What `echo ...` or `printf ...` writes, roughly; undefined for any other command. */
function echoedText(words: string[]): string | undefined {
  const name = path.posix.basename(words[0] ?? "");
  if (name !== "echo" && name !== "printf") return undefined;
  let args = words.slice(1);
  if (name === "echo") while (args[0] !== undefined && /^-[neE]+$/.test(args[0])) args = args.slice(1);
  return args.join(" ").replace(/\\n/g, "\n").replace(/\\t/g, "\t");
}

/** Redirections onto a disk device or a kernel trigger. */
function inspectRedirects(command: SimpleCommand): GuardVerdict | undefined {
  for (const r of command.redirects) {
    if (r.op !== "<" && (BLOCK_DEVICE.test(r.target) || KERNEL_TRIGGERS.has(r.target))) {
      return refuse("block_device_write", `writing to ${r.target} would destroy a disk or the running kernel`);
    }
  }
  return undefined;
}

/** Commands that hand shell text to another shell: bash -c TEXT, eval TEXT, echo TEXT | sh. */
function inspectShellText(
  name: string,
  args: string[],
  stdin: string | undefined,
  scope: Scope,
): GuardVerdict | undefined {
  if (SHELLS.has(name)) {
    // A flag word holding c (-c, -xc, -ec...); tested as two linear checks, not /^-[a-z]*c[a-z]*$/, which
    // backtracks quadratically on a long word of c's.
    const c = args.findIndex((a) => /^-[a-z]*$/.test(a) && a.includes("c"));
    if (c !== -1 && args[c + 1] !== undefined) return inspectNested(args[c + 1]!, scope, false);
    if (c === -1 && stdin !== undefined && args.every((a) => a.startsWith("-")))
      return inspectNested(stdin, scope, false);
  }
  if (name === "eval") return inspectNested(args.join(" "), scope, true);
  return undefined;
}

/** rm, chmod/chown/chgrp, mv and find aimed at /, ~, a system directory, or out of the project. */
function inspectPathCommands(
  name: string,
  args: string[],
  place: Place,
  vars: KnownVariables,
): GuardVerdict | undefined {
  const { flags, operands } = splitFlags(args);
  if (name === "rm" && (hasShortFlag(flags, "rR") || flags.includes("--recursive"))) {
    return refuseTarget("recursive rm", "recursive_delete_of_system_path", operands, place, vars, true);
  }
  if (
    (name === "chmod" || name === "chown" || name === "chgrp") &&
    (hasShortFlag(flags, "R") || flags.includes("--recursive"))
  ) {
    return refuseTarget(
      `recursive ${name}`,
      "recursive_permission_change_of_system_path",
      operands.slice(1),
      place,
      vars,
      false,
    );
  }
  if (name === "mv") return refuseTarget("mv", "move_system_path", operands.slice(0, -1), place, vars, false);
  if (name === "find") {
    const firstPath = args.findIndex((a) => !/^-[HLP]$/.test(a));
    const rest = firstPath === -1 ? [] : args.slice(firstPath);
    const firstExpression = rest.findIndex((a) => a.startsWith("-") || a === "(" || a === "!");
    const startPaths = firstExpression === -1 ? rest : rest.slice(0, firstExpression);
    const deletes =
      args.includes("-delete") ||
      args.some((a, i) => (a === "-exec" || a === "-execdir") && path.posix.basename(args[i + 1] ?? "") === "rm");
    if (deletes)
      return refuseTarget(
        "find with delete",
        "find_delete_of_system_path",
        startPaths.length === 0 ? ["."] : startPaths,
        place,
        vars,
        true,
      );
  }
  return undefined;
}

/** mkfs, power state, kill everything, dd/cp/tee onto a disk device. */
function inspectMachineCommands(name: string, args: string[]): GuardVerdict | undefined {
  const { operands } = splitFlags(args);
  if (MKFS.test(name)) return refuse("make_filesystem", `${name} formats a device`);
  if (POWER.has(name)) return refuse("power_state", `${name} changes the machine's power state`);
  if ((name === "init" || name === "telinit") && ["0", "6"].includes(operands[0] ?? ""))
    return refuse("power_state", `${name} ${operands[0]} halts or reboots the machine`);
  if (name === "systemctl" && operands.some((o) => SYSTEMCTL_POWER.has(o)))
    return refuse("power_state", "systemctl would change the machine's power state");
  if (name === "killall5") return refuse("kill_everything", "killall5 signals every process");
  if (name === "kill") {
    const targets = killTargets(args);
    if (targets.includes("-1") || targets.includes("1"))
      return refuse(
        "kill_everything",
        "kill -1 signals every process you own (the bridge included); kill 1 signals init",
      );
  }
  if (name === "dd") {
    const of = args.find((a) => a.startsWith("of="))?.slice(3);
    if (of !== undefined && BLOCK_DEVICE.test(of)) return refuse("block_device_write", `dd to ${of} overwrites a disk`);
  }
  // tee/shred/truncate write every operand; cp and install write only the last.
  const written =
    name === "cp" || name === "install"
      ? operands.slice(-1)
      : ["tee", "shred", "truncate"].includes(name)
        ? operands
        : [];
  const device = written.find((o) => BLOCK_DEVICE.test(o));
  if (device !== undefined) return refuse("block_device_write", `${name} on ${device} overwrites a disk`);
  return undefined;
}

/** One simple command; `piped` is the command whose output it reads, if any. A cd moves `scope.place`. */
function inspectSimple(
  command: SimpleCommand,
  unwrapped: Unwrapped,
  piped: Unwrapped | undefined,
  scope: Scope,
): GuardVerdict {
  const redirect = inspectRedirects(command);
  if (redirect) return redirect;
  if (trackVariables(command.words, scope.vars)) return { ok: true };
  const stdin = piped === undefined ? undefined : echoedText(piped.words);
  const words =
    unwrapped.readsArguments && stdin !== undefined
      ? [...unwrapped.words, ...stdin.split(/\s+/).filter(Boolean)]
      : unwrapped.words;
  if (words.length === 0) return { ok: true };
  const name = path.posix.basename(words[0]!);
  const args = words.slice(1);
  if (name === "cd" || name === "pushd") {
    scope.place = placeAfterCd(scope.place, splitFlags(args).operands[0], name, scope.vars);
    return { ok: true };
  }
  if (name === "popd") scope.place = { kind: "unknown" };
  if (args.includes("--no-preserve-root"))
    return refuse("no_preserve_root", "--no-preserve-root exists only to destroy /");
  // env -C moves only the command it wraps; an eval'd cd moves the rest of the command line.
  const here =
    unwrapped.chdir === undefined
      ? scope
      : { ...scope, place: placeAfterCd(scope.place, unwrapped.chdir, "env -C", scope.vars) };
  return (
    inspectShellText(name, args, stdin, here) ??
    inspectPathCommands(name, args, here.place, scope.vars) ??
    inspectMachineCommands(name, args) ?? { ok: true }
  );
}

/** The pid operands of kill (the first option is a signal: -9, -KILL, -s KILL, -n 9). */
function killTargets(args: string[]): string[] {
  let i = 0;
  if (args[i] === "-s" || args[i] === "-n") i += 2;
  // "kill -1 1234" sends SIGHUP to 1234; "kill -9 -1" and "kill -- -1" signal everything.
  else if (args.length > 1 && args[0]!.startsWith("-") && args[0] !== "--") i += 1;
  if (args[i] === "--") i++;
  return args.slice(i);
}

/** Shell text run by a command: a child shell starts where the command stands; eval (`share`) moves it too. */
function inspectNested(text: string, scope: Scope, share: boolean): GuardVerdict {
  if (scope.depth >= MAX_GUARD_NESTING)
    return refuse(
      "too_deeply_nested",
      `shell text nested more than ${MAX_GUARD_NESTING} levels deep cannot be checked`,
    );
  const inner: Scope = { place: scope.place, vars: share ? scope.vars : new Map(scope.vars), depth: scope.depth + 1 };
  const verdict = inspectAt(text, inner);
  if (share) scope.place = inner.place;
  return verdict;
}

function inspectAt(text: string, scope: Scope): GuardVerdict {
  if (FORK_BOMB.test(text))
    return refuse("fork_bomb", "a function that pipes itself into itself in the background is a fork bomb");
  const start = { place: scope.place, vars: new Map(scope.vars) };
  const reading = readShell(text);
  let previous: Unwrapped | undefined;
  for (const [i, command] of reading.commands.entries()) {
    const unwrapped = unwrap(command.words);
    const piped =
      i > 0 && (reading.separators[i - 1] === "|" || reading.separators[i - 1] === "|&") ? previous : undefined;
    const verdict = inspectSimple(command, unwrapped, piped, scope);
    if (!verdict.ok) return verdict;
    previous = unwrapped;
  }
  for (const body of reading.substitutions) {
    const verdict = inspectNested(body, { ...start, depth: scope.depth }, false);
    if (!verdict.ok) return verdict;
  }
  return { ok: true };
}

/** Inspects shell text without running it. */
export function inspectCommand(command: string, context: GuardContext = {}): GuardVerdict {
  return inspectAt(command, {
    place: { kind: "project", up: 0, below: context.cwdDepth ?? 0 },
    vars: new Map(),
    depth: 0,
  });
}

/** Throws command_refused for a catastrophic or accident-shaped command; returns quietly otherwise. */
export function guardCommand(command: string, context: GuardContext = {}): void {
  const verdict = inspectCommand(command, context);
  if (verdict.ok) return;
  throw new ToolError(
    ErrorCode.commandRefused,
    `Refused: ${verdict.reason}. ${verdict.hint} (The guard is a seatbelt for accident-shaped commands; see docs/PROTOCOL.md, "The command guard".)`,
    { detail: { rule: verdict.rule }, retryable: false, agentAction: "correct_request" },
  );
}
