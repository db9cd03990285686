// Refuses a short list of obviously machine-destroying terminal commands (rm -rf /, mkfs, shutdown, fork bombs,
// writes to block devices...). A guard against accidents and confused agents, not a sandbox: see docs/PROTOCOL.md §6.
import os from "node:os";
import path from "node:path";
import { ErrorCode, ToolError } from "../errors.js";
import { readShell, type SimpleCommand } from "./shell-words.js";

export type GuardRule =
  | "recursive_delete_of_system_path"
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

export type GuardVerdict = { ok: true } | { ok: false; rule: GuardRule; reason: string };

/** Nested shell text (bash -c '...', eval, $(...)) is inspected to this depth; deeper nesting is refused. */
export const MAX_GUARD_NESTING = 6;

/** Top-level directories whose recursive removal or permission change breaks the machine. */
const SYSTEM_DIRS = new Set([
  "bin", "boot", "dev", "etc", "home", "lib", "lib32", "lib64", "libx32", "media", "mnt", "opt",
  "proc", "root", "run", "sbin", "snap", "srv", "sys", "usr", "var",
]);

const BLOCK_DEVICE = /^\/dev\/(?:sd[a-z]+\d*|hd[a-z]+\d*|vd[a-z]+\d*|xvd[a-z]+\d*|nvme\d+n\d+(?:p\d+)?|mmcblk\d+(?:p\d+)?|md\d+|dm-\d+|loop\d+|sr\d+|mapper\/.+|disk\/.+|mem|kmem|port)$/;
const KERNEL_TRIGGERS = new Set(["/proc/sysrq-trigger"]);

const FORK_BOMB = /(?:function\s+)?([\w:.-]+)\s*(?:\(\s*\))?\s*\{\s*\1\s*\|\s*\1\s*&\s*;?\s*\}/;

/** Words that only wrap the real command, each with the options of its that take a separate value. */
const WRAPPERS = new Map<string, Set<string>>([
  ["sudo", new Set(["-u", "-g", "-C", "-h", "-p", "-r", "-t", "-U", "-D", "--user", "--group"])],
  ["doas", new Set(["-u", "-C"])],
  ["env", new Set(["-u", "-C", "-S", "--unset", "--chdir"])],
  ["nice", new Set(["-n", "--adjustment"])],
  ["ionice", new Set(["-c", "-n", "-p"])],
  ["stdbuf", new Set(["-i", "-o", "-e"])],
  ["timeout", new Set(["-s", "-k", "--signal", "--kill-after"])],
  ["exec", new Set(["-a"])],
  ...["command", "builtin", "nohup", "time", "busybox", "then", "do", "else", "if", "while", "until", "!", "{", "}"].map(
    (w): [string, Set<string>] => [w, new Set()],
  ),
]);

const SHELLS = new Set(["sh", "bash", "dash", "zsh", "ksh", "ash", "mksh"]);
const MKFS = /^(?:mkfs(?:\..+)?|mke2fs|mkswap|wipefs|mkdosfs|mkntfs)$/;
const POWER = new Set(["shutdown", "reboot", "halt", "poweroff", "kexec"]);
const SYSTEMCTL_POWER = new Set(["poweroff", "reboot", "halt", "kexec", "emergency", "rescue", "suspend", "hibernate", "hybrid-sleep", "soft-reboot"]);

function refuse(rule: GuardRule, reason: string): GuardVerdict {
  return { ok: false, rule, reason };
}

/** Root, the home directory, or a top-level system directory (with optional trailing /, /*, /.). */
export function isCriticalPath(input: string): boolean {
  let p = input.trim();
  if (p === "") return false;
  p = p.replace(/^\$\{?HOME\}?/, "~");
  if (/^~\/?(?:\*|\.)?$/.test(p)) return true;
  if (!p.startsWith("/")) return false;
  p = p.replace(/\/+/g, "/").replace(/(?:\/\.|\/\*|\/\.\*)+$/, "").replace(/\/+$/, "");
  if (p === "" || p === "/") return true;
  const normalized = path.posix.normalize(p);
  if (normalized === "/" || normalized === safeHome()) return true;
  const parts = normalized.split("/").filter(Boolean);
  return parts.length === 1 && SYSTEM_DIRS.has(parts[0]!);
}

function safeHome(): string | undefined {
  try {
    return path.posix.normalize(os.homedir());
  } catch {
    return undefined;
  }
}

/** Drops assignments and wrapper words (sudo, env, nohup...) to find the command that really runs. */
function unwrap(words: string[]): string[] {
  let i = 0;
  while (i < words.length) {
    const word = words[i]!;
    const name = path.posix.basename(word);
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(word)) i++;
    else if (WRAPPERS.has(name)) {
      const withValue = WRAPPERS.get(name)!;
      i++;
      while (i < words.length && words[i]!.startsWith("-") && words[i] !== "-") i += withValue.has(words[i]!) ? 2 : 1;
      // timeout and nice take a bare number before the command.
      if ((name === "timeout" || name === "nice") && i < words.length && /^[\d.]+[smhd]?$/.test(words[i]!)) i++;
    } else break;
  }
  return words.slice(i);
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

const hasShortFlag = (flags: string[], letters: string) => flags.some((f) => !f.startsWith("--") && [...letters].some((l) => f.includes(l)));

function inspectSimple(command: SimpleCommand, depth: number): GuardVerdict {
  for (const r of command.redirects) {
    if (r.op !== "<" && (BLOCK_DEVICE.test(r.target) || KERNEL_TRIGGERS.has(r.target))) {
      return refuse("block_device_write", `writing to ${r.target} would destroy a disk or the running kernel`);
    }
  }
  const words = unwrap(command.words);
  if (words.length === 0) return { ok: true };
  const name = path.posix.basename(words[0]!);
  const args = words.slice(1);
  const { flags, operands } = splitFlags(args);

  if (SHELLS.has(name)) {
    const c = args.findIndex((a) => /^-[a-z]*c[a-z]*$/.test(a));
    if (c !== -1 && args[c + 1] !== undefined) return inspectNested(args[c + 1]!, depth);
  }
  if (name === "eval") return inspectNested(args.join(" "), depth);
  if (flags.includes("--no-preserve-root")) return refuse("no_preserve_root", "--no-preserve-root exists only to destroy /");
  if (name === "rm") {
    const recursive = hasShortFlag(flags, "rR") || flags.includes("--recursive");
    const target = operands.find(isCriticalPath);
    if (recursive && target !== undefined) return refuse("recursive_delete_of_system_path", `recursive rm of ${target} would wipe the machine or the home directory`);
  }
  if (MKFS.test(name)) return refuse("make_filesystem", `${name} formats a device`);
  if (POWER.has(name)) return refuse("power_state", `${name} changes the machine's power state`);
  if ((name === "init" || name === "telinit") && ["0", "6"].includes(operands[0] ?? "")) return refuse("power_state", `${name} ${operands[0]} halts or reboots the machine`);
  if (name === "systemctl" && operands.some((o) => SYSTEMCTL_POWER.has(o))) return refuse("power_state", "systemctl would change the machine's power state");
  if (name === "killall5") return refuse("kill_everything", "killall5 signals every process");
  if (name === "kill") {
    const targets = killTargets(args);
    if (targets.includes("-1") || targets.includes("1")) return refuse("kill_everything", "kill -1 signals every process you own (the bridge included); kill 1 signals init");
  }
  if (name === "dd") {
    const of = args.find((a) => a.startsWith("of="))?.slice(3);
    if (of !== undefined && BLOCK_DEVICE.test(of)) return refuse("block_device_write", `dd to ${of} overwrites a disk`);
  }
  // tee/shred/truncate write every operand; cp and install write only the last.
  const written = name === "cp" || name === "install" ? operands.slice(-1) : ["tee", "shred", "truncate"].includes(name) ? operands : [];
  const device = written.find((o) => BLOCK_DEVICE.test(o));
  if (device !== undefined) return refuse("block_device_write", `${name} on ${device} overwrites a disk`);
  if (name === "chmod" || name === "chown" || name === "chgrp") {
    const recursive = hasShortFlag(flags, "R") || flags.includes("--recursive");
    const target = operands.slice(1).find(isCriticalPath);
    if (recursive && target !== undefined) return refuse("recursive_permission_change_of_system_path", `recursive ${name} of ${target} breaks the machine`);
  }
  if (name === "mv") {
    const source = operands.slice(0, -1).find(isCriticalPath);
    if (source !== undefined) return refuse("move_system_path", `moving ${source} breaks the machine`);
  }
  if (name === "find") {
    const firstPath = args.findIndex((a) => !/^-[HLP]$/.test(a));
    const rest = firstPath === -1 ? [] : args.slice(firstPath);
    const firstExpression = rest.findIndex((a) => a.startsWith("-") || a === "(" || a === "!");
    const startPaths = firstExpression === -1 ? rest : rest.slice(0, firstExpression);
    const deletes = args.includes("-delete") || args.some((a, i) => (a === "-exec" || a === "-execdir") && path.posix.basename(args[i + 1] ?? "") === "rm");
    const target = startPaths.find(isCriticalPath);
    if (deletes && target !== undefined) return refuse("find_delete_of_system_path", `find ${target} with delete would wipe the machine`);
  }
  return { ok: true };
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

function inspectNested(text: string, depth: number): GuardVerdict {
  if (depth >= MAX_GUARD_NESTING) return refuse("too_deeply_nested", `shell text nested more than ${MAX_GUARD_NESTING} levels deep cannot be checked`);
  return inspectAt(text, depth + 1);
}

function inspectAt(text: string, depth: number): GuardVerdict {
  if (FORK_BOMB.test(text)) return refuse("fork_bomb", "a function that pipes itself into itself in the background is a fork bomb");
  const reading = readShell(text);
  for (const command of reading.commands) {
    const verdict = inspectSimple(command, depth);
    if (!verdict.ok) return verdict;
  }
  for (const body of reading.substitutions) {
    const verdict = inspectNested(body, depth);
    if (!verdict.ok) return verdict;
  }
  return { ok: true };
}

/** Inspects shell text without running it. */
export function inspectCommand(command: string): GuardVerdict {
  return inspectAt(command, 0);
}

/** Throws command_refused for a catastrophic command; returns quietly otherwise. */
export function guardCommand(command: string): void {
  const verdict = inspectCommand(command);
  if (verdict.ok) return;
  throw new ToolError(
    ErrorCode.commandRefused,
    `Refused: ${verdict.reason}. The terminal guard blocks machine-level destructive commands. Narrow the target to a path inside /project; to delete project files prefer /a with "*** Delete File:".`,
    { detail: { rule: verdict.rule }, retryable: false, agentAction: "correct_request" },
  );
}
