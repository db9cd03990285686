// Refuses a short list of machine-destroying and accident-shaped terminal commands (rm -rf /, rm -rf "$UNSET/"*,
// cd / && rm -rf *, mkfs, shutdown, fork bombs, writes to block devices...). A seatbelt against accidents and
// confused agents, not a security boundary (that is the sandbox): see docs/PROTOCOL.md, "The command guard".
import path from "node:path";
import { ErrorCode, ToolError } from "../errors.js";
import { inspectMachineCommands, inspectPathCommands, inspectRedirects, splitFlags } from "./guard-commands.js";
import {
  isAbsoluteOrHome,
  isCriticalResolved,
  placeAfterCd,
  worstCase,
  type Place,
  type WorstCase,
} from "./guard-paths.js";
import { refuse, type GuardVerdict } from "./guard-rules.js";
import { unwrap, type Unwrapped } from "./guard-unwrap.js";
import { readShell, type SimpleCommand } from "./shell-words.js";

export type { GuardRule, GuardVerdict } from "./guard-rules.js";

export interface GuardContext {
  /** How many directories below the project root the command starts (0: the root, the default). */
  cwdDepth?: number;
}

/** Nested shell text (bash -c '...', eval, $(...)) is inspected to this depth; deeper nesting is refused. */
export const MAX_GUARD_NESTING = 6;

// Linear in the command's length (a long word or run of spaces must not make it backtrack quadratically, which
// froze the event loop for seconds per 64 KiB): the name starts only where a word starts and is taken whole
// (a lookahead capture, JavaScript's atomic group), and no two whitespace runs are adjacent.
const FORK_BOMB = /(?<![\w:.-])(?:function\s+)?(?=([\w:.-]+))\1\s*(?:\(\s*\)\s*)?\{\s*\1\s*\|\s*\1\s*&\s*(?:;\s*)?\}/;

const SHELLS = new Set(["sh", "bash", "dash", "zsh", "ksh", "ash", "mksh"]);

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

/** What `echo ...` or `printf ...` writes, roughly; undefined for any other command. */
function echoedText(words: string[]): string | undefined {
  const name = path.posix.basename(words[0] ?? "");
  if (name !== "echo" && name !== "printf") return undefined;
  let args = words.slice(1);
  if (name === "echo") while (args[0] !== undefined && /^-[neE]+$/.test(args[0])) args = args.slice(1);
  return args.join(" ").replace(/\\n/g, "\n").replace(/\\t/g, "\t");
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
