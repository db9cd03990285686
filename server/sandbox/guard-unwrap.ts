// Finds the command that really runs under wrapper words (sudo, env, nohup, timeout, setsid, xargs, flock...),
// for the command guard. `env -S` and `flock FILE -c` carry shell text of their own; `env -C` changes directory.
import path from "node:path";
import { readShell } from "./shell-words.js";

export interface Unwrapped {
  /** The command that runs, with its arguments. */
  words: string[];
  /** A directory the command runs in instead of the current one (`env -C DIR`). */
  chdir?: string;
  /** True when xargs sits in front: more arguments come from standard input. */
  readsArguments: boolean;
}

/** Words that only wrap the real command, each with those of its options that take a separate value. */
const WRAPPERS = new Map<string, Set<string>>([
  ["sudo", new Set(["-u", "-g", "-C", "-h", "-p", "-r", "-t", "-U", "-D", "--user", "--group"])],
  ["doas", new Set(["-u", "-C"])],
  ["runuser", new Set(["-u", "-g", "-G", "--user", "--group", "--supp-group"])],
  ["nice", new Set(["-n", "--adjustment"])],
  ["ionice", new Set(["-c", "-n", "-p"])],
  ["stdbuf", new Set(["-i", "-o", "-e"])],
  ["timeout", new Set(["-s", "-k", "--signal", "--kill-after"])],
  ["exec", new Set(["-a"])],
  [
    "xargs",
    new Set([
      "-a",
      "-d",
      "-E",
      "-I",
      "-L",
      "-n",
      "-P",
      "-s",
      "--arg-file",
      "--delimiter",
      "--eof",
      "--replace",
      "--max-lines",
      "--max-args",
      "--max-procs",
      "--max-chars",
      "--process-slot-var",
    ]),
  ],
  ...[
    "command",
    "builtin",
    "nohup",
    "time",
    "busybox",
    "setsid",
    "then",
    "do",
    "else",
    "if",
    "while",
    "until",
    "!",
    "{",
    "}",
  ].map((w): [string, Set<string>] => [w, new Set()]),
]);

/** Wrappers that take one bare number before the command. */
const NUMBER_FIRST = new Set(["timeout", "nice"]);
const FLOCK_VALUES = new Set(["-w", "-E", "--timeout", "--wait", "--conflict-exit-code"]);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

const isOption = (word: string | undefined) => word !== undefined && word.startsWith("-") && word !== "-";

/** The words env -S splits its string into (roughly as the shell would). */
function splitString(text: string): string[] {
  return readShell(text).commands.flatMap((command) => command.words);
}

/** Reads env's options; returns the words after them (with -S text spliced in) and any -C directory. */
function unwrapEnv(args: string[]): { rest: string[]; chdir?: string } {
  let chdir: string | undefined;
  let i = 0;
  while (i < args.length) {
    const arg = args[i]!;
    const separate = arg === "-S" || arg === "--split-string";
    const split = separate ? args[i + 1] : /^(?:-S|--split-string=)([\s\S]+)$/.exec(arg)?.[1];
    if (split !== undefined) {
      return {
        rest: [...splitString(split), ...args.slice(i + (separate ? 2 : 1))],
        ...(chdir !== undefined ? { chdir } : {}),
      };
    }
    if (arg === "--") {
      i++;
      break;
    }
    if (arg === "-C" || arg === "--chdir") {
      chdir = args[i + 1];
      i += 2;
    } else if (/^(?:-C|--chdir=)./.test(arg)) {
      chdir = arg.replace(/^(?:-C|--chdir=)/, "");
      i++;
    } else if (arg === "-u" || arg === "--unset") i += 2;
    else if (arg.startsWith("-")) i++;
    else break;
  }
  return { rest: args.slice(i), ...(chdir !== undefined ? { chdir } : {}) };
}

/** flock [options] FILE (-c TEXT | COMMAND...): the command, as `sh -c TEXT` for the -c form. */
function unwrapFlock(args: string[]): string[] {
  let i = 0;
  while (isOption(args[i]) && args[i] !== "--") i += FLOCK_VALUES.has(args[i]!) ? 2 : 1;
  if (args[i] === "--") i++;
  i++; // the lock file or directory
  if (args[i] === "-c" || args[i] === "--command") return ["sh", "-c", args[i + 1] ?? ""];
  return args.slice(i);
}

/** su/runuser with -c TEXT run TEXT in a shell; su without it starts an interactive shell (nothing to check). */
function commandOption(args: string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "-c" || args[i] === "--command") return args[i + 1] ?? "";
    const joined = /^--command=([\s\S]*)$/.exec(args[i]!);
    if (joined) return joined[1];
  }
  return undefined;
}

/** Drops assignments and wrapper words to find the command that really runs. */
export function unwrap(input: string[]): Unwrapped {
  let words = input;
  let chdir: string | undefined;
  let readsArguments = false;
  // Each turn consumes at least one word, and -S text is bounded by the input, so this ends.
  for (let turn = 0; turn <= input.length * 2 && words.length > 0; turn++) {
    const word = words[0]!;
    const name = path.posix.basename(word);
    const args = words.slice(1);
    if (ASSIGNMENT.test(word)) words = args;
    else if (name === "env") {
      const env = unwrapEnv(args);
      words = env.rest;
      chdir = env.chdir ?? chdir;
    } else if (name === "flock") words = unwrapFlock(args);
    else if (name === "su" || (name === "runuser" && commandOption(args) !== undefined)) {
      const text = commandOption(args);
      words = text === undefined ? [] : ["sh", "-c", text];
    } else if (WRAPPERS.has(name)) {
      const withValue = WRAPPERS.get(name)!;
      let i = 0;
      while (isOption(args[i])) i += withValue.has(args[i]!) ? 2 : 1;
      if (NUMBER_FIRST.has(name) && /^[\d.]+[smhd]?$/.test(args[i] ?? "")) i++;
      if (name === "xargs") readsArguments = true;
      words = args.slice(i);
    } else break;
  }
  return { words, ...(chdir !== undefined ? { chdir } : {}), readsArguments };
}
