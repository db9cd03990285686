// Where a path operand of the command guard may land, read pessimistically: every expansion that may be empty
// taken as empty (the `rm -rf "$UNSET/"*` accident), globs matched against the system directories, and relative
// paths followed from where the command runs (the project, or wherever an earlier `cd` of the same command went).
import os from "node:os";
import path from "node:path";

/** Top-level directories whose recursive removal or permission change breaks the machine. */
const SYSTEM_DIRS = [
  "bin",
  "boot",
  "dev",
  "etc",
  "home",
  "lib",
  "lib32",
  "lib64",
  "libx32",
  "media",
  "mnt",
  "opt",
  "proc",
  "root",
  "run",
  "sbin",
  "snap",
  "srv",
  "sys",
  "usr",
  "var",
];
const SYSTEM_DIR_SET = new Set(SYSTEM_DIRS);

/** Stands for a value that is surely non-empty but unknown (`${X:?}`, `$$`): a name that matches nothing. */
export const UNKNOWN_VALUE = "\u0001";

const GLOB = /[*?[]/;

/**
 * Where relative paths start. "project": `up` levels above the project root, then `below` levels down from
 * there (names unknown); the terminal's cwd is { up: 0, below: depth }. "path": an absolute or ~ path a `cd`
 * went to, with `via` saying which. "unknown": somewhere the guard cannot follow (`cd -`, `popd`).
 */
export type Place =
  { kind: "project"; up: number; below: number } | { kind: "path"; path: string; via: string } | { kind: "unknown" };

export interface WorstCase {
  /** The word with every possibly-empty expansion removed. */
  text: string;
  /** True when an expansion was taken as empty. */
  emptied: boolean;
}

/** Shell variables an earlier part of the same command set (`D=build;`, `for d in a b`), as worst cases. */
export type KnownVariables = ReadonlyMap<string, WorstCase>;
const NONE_KNOWN: KnownVariables = new Map();

/** Index of the character that closes the bracket opened just before `start` ("(" or "{"), counting nesting. */
function closing(word: string, start: number, open: string, close: string): number {
  let depth = 1;
  for (let i = start; i < word.length; i++) {
    if (word[i] === open) depth++;
    else if (word[i] === close && --depth === 0) return i;
  }
  return word.length;
}

/** The worst value of `${...}` given its inside: a `:?` or a length is non-empty, a default is the default. */
function braceWorstCase(inner: string, known: KnownVariables): WorstCase {
  if (inner.startsWith("#") && inner.length > 1) return { text: "0", emptied: false };
  const match = /^([A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-])([\s\S]*)$/.exec(inner);
  const value = known.get(match?.[1] ?? "");
  const rest = match?.[2] ?? "";
  if (rest === "" && value !== undefined) return value;
  if (/^:?\?/.test(rest))
    return value !== undefined && value.text !== "" ? value : { text: UNKNOWN_VALUE, emptied: false };
  const fallback = /^:?[-=]([\s\S]*)$/.exec(rest);
  if (fallback) {
    if (value !== undefined && value.text !== "") return value;
    const chosen = worstCase(fallback[1]!, known);
    return { text: chosen.text, emptied: chosen.emptied || chosen.text === "" };
  }
  return { text: "", emptied: true };
}

/**
 * The word as it reads when every expansion that may be empty is empty: `$UNSET/*` reads `/*`, `${D:?}/*`
 * stays non-empty. A leading `$HOME` reads `~` and a leading `$PWD` reads `.`, since both are always set; a
 * variable set earlier in the command reads as what it was set to.
 */
export function worstCase(word: string, known: KnownVariables = NONE_KNOWN): WorstCase {
  let text = "";
  let emptied = false;
  let i = 0;
  const lead = /^\$(?:\{(HOME|PWD)(?::?\?[^}]*)?\}|(HOME|PWD)(?![A-Za-z0-9_]))/.exec(word);
  if (lead) {
    text = (lead[1] ?? lead[2]) === "HOME" ? "~" : ".";
    i = lead[0].length;
  }
  while (i < word.length) {
    const ch = word[i]!;
    const next = word[i + 1] ?? "";
    if (ch === "`") {
      const end = word.indexOf("`", i + 1);
      emptied = true;
      i = end === -1 ? word.length : end + 1;
    } else if (ch !== "$") {
      text += ch;
      i++;
    } else if (next === "(") {
      emptied = true;
      i = closing(word, i + 2, "(", ")") + 1;
    } else if (next === "{") {
      const end = closing(word, i + 2, "{", "}");
      const value = braceWorstCase(word.slice(i + 2, end), known);
      text += value.text;
      emptied ||= value.emptied;
      i = end + 1;
    } else if (/[A-Za-z_]/.test(next)) {
      const name = /^[A-Za-z0-9_]+/.exec(word.slice(i + 1))![0];
      const value = known.get(name);
      text += value?.text ?? "";
      emptied ||= value === undefined || value.emptied;
      i += 1 + name.length;
    } else if (/[0-9@*]/.test(next)) {
      emptied = true;
      i += 2;
    } else if (/[$?#!-]/.test(next)) {
      text += UNKNOWN_VALUE;
      i += 2;
    } else {
      text += ch;
      i++;
    }
  }
  return { text, emptied };
}

/** One position of a glob: `*`, or a test of one character (`?`, a bracket class, a literal). */
type GlobStep = "star" | ((ch: string) => boolean);

/** The glob as steps, or undefined when a bracket class is not one we can read (then it may match anything). */
function globSteps(glob: string): GlobStep[] | undefined {
  const steps: GlobStep[] = [];
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i]!;
    const close = ch === "[" ? glob.indexOf("]", i + 2) : -1;
    if (ch === "*") {
      // A run of stars matches what one does.
      if (steps[steps.length - 1] !== "star") steps.push("star");
    } else if (ch === "?") steps.push((c) => c !== "\n" && c !== "\r");
    else if (close !== -1) {
      const body = glob
        .slice(i + 1, close)
        .replace(/^[!^]/, "^")
        .replace(/\\/g, "\\\\");
      let cls: RegExp;
      try {
        cls = new RegExp(`^[${body}]$`);
      } catch {
        return undefined;
      }
      steps.push((c) => cls.test(c));
      i = close;
    } else steps.push((c) => c === ch);
  }
  return steps;
}

/**
 * Whether a glob matches a whole name, in time proportional to the glob's length times the name's (a set of the
 * name's prefixes the glob so far can match, step by step): never the backtracking of a `.*`-per-star regular
 * expression, which took a minute for `rm -rf` followed by a hundred stars. A class we cannot read matches.
 */
function globMatches(glob: string, name: string): boolean {
  const steps = globSteps(glob);
  if (steps === undefined) return true;
  // reach[j]: the steps so far can match name's first j characters.
  let reach: boolean[] = Array.from({ length: name.length + 1 }, (_, j) => j === 0);
  for (const step of steps) {
    const next: boolean[] = new Array<boolean>(name.length + 1).fill(false);
    if (step === "star") {
      let seen = false;
      for (let j = 0; j <= name.length; j++) next[j] = seen ||= reach[j]!;
    } else for (let j = 0; j < name.length; j++) if (reach[j] && step(name[j]!)) next[j + 1] = true;
    reach = next;
    if (!reach.includes(true)) return false;
  }
  return reach[name.length]!;
}

function homeDirectory(): string | undefined {
  try {
    return path.posix.normalize(os.homedir());
  } catch {
    return undefined;
  }
}

/** Components of an absolute or ~ path with `.` and `..` applied; undefined when it climbs above ~. */
function components(p: string): { home: boolean; parts: string[] } | undefined {
  const home = p === "~" || p.startsWith("~/");
  const parts: string[] = [];
  for (const part of (home ? p.slice(1) : p).split("/")) {
    if (part === "" || part === ".") continue;
    if (part !== "..") parts.push(part);
    else if (parts.length > 0) parts.pop();
    else if (home) return undefined;
  }
  return { home, parts };
}

/** True for an absolute or ~ path that is /, ~, a top-level system directory, or a glob that reaches one. */
export function isCriticalResolved(p: string): boolean {
  const resolved = components(p);
  if (resolved === undefined) return true;
  const { home, parts } = resolved;
  const glob = parts.findIndex((part) => GLOB.test(part));
  const prefix = glob === -1 ? parts : parts.slice(0, glob);
  if (home) return prefix.length === 0;
  const joined = `/${prefix.join("/")}`;
  const criticalPrefix =
    prefix.length === 0 || (prefix.length === 1 && SYSTEM_DIR_SET.has(prefix[0]!)) || joined === homeDirectory();
  if (glob === -1 || glob > 0) return criticalPrefix;
  // A glob right under /: critical when it can match a system directory (or "..", as `.*` once did).
  const pattern = parts[0]!;
  return (
    SYSTEM_DIRS.some((dir) => globMatches(pattern, dir)) || (pattern.startsWith(".") && globMatches(pattern, ".."))
  );
}

export function isAbsoluteOrHome(p: string): boolean {
  return p.startsWith("/") || p === "~" || p.startsWith("~/");
}

/** Follows a relative path from a project place; the result is outside the project when `up` > 0. */
export function walkFromProject(place: { up: number; below: number }, relative: string): { up: number; below: number } {
  let { up, below } = place;
  for (const part of relative.split("/")) {
    if (part === "" || part === ".") continue;
    if (part !== "..") below++;
    else if (below > 0) below--;
    else up++;
  }
  return { up, below };
}

/** Where `cd <operand>` (operand undefined: a bare `cd`) goes from `place`; `verb` names the cd in messages. */
export function placeAfterCd(
  place: Place,
  operand: string | undefined,
  verb = "cd",
  known: KnownVariables = NONE_KNOWN,
): Place {
  if (operand === undefined) return { kind: "path", path: "~", via: verb };
  if (operand === "-") return { kind: "unknown" };
  const worst = worstCase(operand, known);
  // An unquoted `cd $EMPTY` is a bare `cd`: it goes home.
  if (worst.text === "") return { kind: "path", path: "~", via: `${verb} ${operand} (empty)` };
  if (isAbsoluteOrHome(worst.text)) return { kind: "path", path: worst.text, via: `${verb} ${operand}` };
  if (place.kind === "path")
    return { kind: "path", path: `${place.path}/${worst.text}`, via: `${place.via} && ${verb} ${operand}` };
  if (place.kind === "project") return { kind: "project", ...walkFromProject(place, worst.text) };
  return place;
}

/** Shows a worst-case reading to a person: `.` and `..` applied, the unknown-value marker as an ellipsis. */
export function showWorst(text: string): string {
  const resolved = components(text);
  const shown =
    resolved === undefined ? text : `${resolved.home ? "~" : ""}/${resolved.parts.join("/")}`.replace(/^~\/$/, "~");
  return shown.replaceAll(UNKNOWN_VALUE, "…");
}

export type TargetReading =
  | { kind: "safe" }
  /** Lands on /, ~ or a system directory; `worst` is the path it reads as, `via` the cd that led there. */
  | { kind: "critical"; worst: string; emptied: boolean; via?: string }
  /** A relative path that leaves the project root (`../..` from the root). */
  | { kind: "outside"; levels: number };

/** How a path operand reads from `place` when every expansion that may be empty is empty. */
export function readTarget(operand: string, place: Place, known: KnownVariables = NONE_KNOWN): TargetReading {
  const worst = worstCase(operand, known);
  if (worst.text === "") return { kind: "safe" };
  if (isAbsoluteOrHome(worst.text)) {
    return isCriticalResolved(worst.text)
      ? { kind: "critical", worst: showWorst(worst.text), emptied: worst.emptied }
      : { kind: "safe" };
  }
  if (place.kind === "path") {
    const joined = `${place.path}/${worst.text}`;
    return isCriticalResolved(joined)
      ? { kind: "critical", worst: showWorst(joined), emptied: worst.emptied, via: place.via }
      : { kind: "safe" };
  }
  if (place.kind === "project") {
    const landed = walkFromProject(place, worst.text);
    if (landed.up > 0) return { kind: "outside", levels: landed.up };
  }
  return { kind: "safe" };
}
