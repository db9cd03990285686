// The command guard's (command-guard.ts) checks of one command by its name: recursive rm, chmod/chown/chgrp, mv
// and find aimed at /, ~, a system directory or out of the project; mkfs, power state, kill everything, and
// writes onto a disk device or a kernel trigger.
import path from "node:path";
import { readTarget, type KnownVariables, type Place } from "./guard-paths.js";
import { AFTER_CD_HINT, refuse, type GuardRule, type GuardVerdict } from "./guard-rules.js";
import type { SimpleCommand } from "./shell-words.js";

const BLOCK_DEVICE =
  /^\/dev\/(?:sd[a-z]+\d*|hd[a-z]+\d*|vd[a-z]+\d*|xvd[a-z]+\d*|nvme\d+n\d+(?:p\d+)?|mmcblk\d+(?:p\d+)?|md\d+|dm-\d+|loop\d+|sr\d+|mapper\/.+|disk\/.+|mem|kmem|port)$/;
const KERNEL_TRIGGERS = new Set(["/proc/sysrq-trigger"]);

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

export function splitFlags(args: string[]): { flags: string[]; operands: string[] } {
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

/** Redirections onto a disk device or a kernel trigger. */
export function inspectRedirects(command: SimpleCommand): GuardVerdict | undefined {
  for (const r of command.redirects) {
    if (r.op !== "<" && (BLOCK_DEVICE.test(r.target) || KERNEL_TRIGGERS.has(r.target))) {
      return refuse("block_device_write", `writing to ${r.target} would destroy a disk or the running kernel`);
    }
  }
  return undefined;
}

/** rm, chmod/chown/chgrp, mv and find aimed at /, ~, a system directory, or out of the project. */
export function inspectPathCommands(
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
export function inspectMachineCommands(name: string, args: string[]): GuardVerdict | undefined {
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

/** The pid operands of kill (the first option is a signal: -9, -KILL, -s KILL, -n 9). */
function killTargets(args: string[]): string[] {
  let i = 0;
  if (args[i] === "-s" || args[i] === "-n") i += 2;
  // "kill -1 1234" sends SIGHUP to 1234; "kill -9 -1" and "kill -- -1" signal everything.
  else if (args.length > 1 && args[0]!.startsWith("-") && args[0] !== "--") i += 1;
  if (args[i] === "--") i++;
  return args.slice(i);
}
