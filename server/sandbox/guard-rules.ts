// What the command guard (command-guard.ts) refuses, by rule, and how each refusal is worded: what was refused
// and how to say the same thing safely.

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
export const AFTER_CD_HINT =
  "Delete by a literal path instead of cd-ing first (rm -rf ./build/*), or set cwd= to a directory inside /project.";
const DEFAULT_HINT =
  "The terminal guard blocks machine-level destructive commands; narrow the target to a path inside /project.";

export function refuse(rule: GuardRule, reason: string, hint = HINTS[rule] ?? DEFAULT_HINT): GuardVerdict {
  return { ok: false, rule, reason, hint };
}
