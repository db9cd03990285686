// Parses the apply_patch envelope (*** Begin Patch ... *** End Patch) into operations: Add File, Delete File,
// Update File (optional *** Move to:, @@ hunks with optional context header, optional *** End of File).
import { ErrorCode, ToolError } from "../../../errors.js";

export type HunkLine = {
  op: " " | "-" | "+";
  text: string;
  /** an empty line without its leading space */ bare?: true;
};

export interface Hunk {
  /** Text after "@@ ", a line to find before the hunk's context; undefined for a bare "@@". */
  header: string | undefined;
  lines: HunkLine[];
  /** "*** End of File": the hunk's old lines must end the file. */
  endOfFile: boolean;
  /** 1-based line of the hunk in the patch, for error messages. */
  patchLine: number;
}

export type PatchOp =
  | { kind: "add"; path: string; lines: string[]; patchLine: number }
  | { kind: "delete"; path: string; patchLine: number }
  | { kind: "update"; path: string; moveTo: string | undefined; hunks: Hunk[]; patchLine: number };

const BEGIN = "*** Begin Patch";
const END = "*** End Patch";
const ADD = "*** Add File: ";
const DELETE = "*** Delete File: ";
const UPDATE = "*** Update File: ";
const MOVE = "*** Move to: ";
const END_OF_FILE = "*** End of File";
/** The usual cause of a stray leading space: a raw= tail turns a bare + into a space. */
export const PLUS_HINT =
  " If this line was meant to start with +: inside raw=, a bare + arrives as a space; write ~q for a literal +.";

function parseError(message: string, line: number | undefined, text?: string): ToolError {
  return new ToolError(ErrorCode.patchParseError, `${line !== undefined ? `Patch line ${line}: ` : ""}${message}`, {
    detail: { ...(line !== undefined ? { line } : {}), ...(text !== undefined ? { text: text.slice(0, 120) } : {}) },
    retryable: false,
  });
}

export function parsePatch(patch: string): PatchOp[] {
  const lines = patch.split(/\r?\n/);
  let first = 0;
  while (first < lines.length && lines[first]!.trim() === "") first++;
  let last = lines.length - 1;
  while (last >= first && lines[last]!.trim() === "") last--;
  if (first > last || lines[first]!.trim() !== BEGIN)
    throw parseError(`a patch starts with "${BEGIN}".`, first + 1, lines[first]);
  if (lines[last]!.trim() !== END || last === first)
    throw parseError(`a patch ends with "${END}".`, last + 1, lines[last]);

  const ops: PatchOp[] = [];
  let i = first + 1;
  while (i < last) {
    // Where an operation header is expected, spaces around it are ignored, as Codex's apply-patch does; inside an
    // Update's hunk lines a leading space still means context (parseHunks).
    const line = lines[i]!.trimStart();
    const n = i + 1;
    if (line.startsWith(ADD)) {
      const added: string[] = [];
      i++;
      while (i < last && lines[i]!.startsWith("+")) added.push(lines[i++]!.slice(1));
      ops.push({ kind: "add", path: pathOf(line, ADD, n), lines: added, patchLine: n });
    } else if (line.startsWith(DELETE)) {
      ops.push({ kind: "delete", path: pathOf(line, DELETE, n), patchLine: n });
      i++;
    } else if (line.startsWith(UPDATE)) {
      i++;
      let moveTo: string | undefined;
      if (i < last && lines[i]!.trimStart().startsWith(MOVE)) {
        moveTo = pathOf(lines[i]!.trimStart(), MOVE, i + 1);
        i++;
      }
      const parsed = parseHunks(lines, i, last);
      i = parsed.next;
      if (parsed.hunks.length === 0 && moveTo === undefined)
        throw parseError(`"${line}" has no @@ hunk and no "${MOVE}" line.`, n, line);
      ops.push({ kind: "update", path: pathOf(line, UPDATE, n), moveTo, hunks: parsed.hunks, patchLine: n });
    } else if (line.trim() === "") {
      i++;
    } else {
      throw parseError(
        `expected "${ADD}", "${UPDATE}", "${DELETE}" or "${END}".${lines[i]!.startsWith(" ") ? PLUS_HINT : ""}`,
        n,
        lines[i],
      );
    }
  }
  if (ops.length === 0) throw parseError("the patch holds no operation.", undefined);
  return ops;
}

function pathOf(line: string, prefix: string, n: number): string {
  const p = line.slice(prefix.length).trim();
  if (p.length === 0) throw parseError(`"${prefix.trim()}" needs a path.`, n, line);
  return p;
}

function parseHunks(lines: string[], start: number, last: number): { hunks: Hunk[]; next: number } {
  const hunks: Hunk[] = [];
  let current: Hunk | undefined;
  let i = start;
  for (; i < last; i++) {
    const line = lines[i]!;
    if (line.startsWith("*** ")) {
      if (line.trim() === END_OF_FILE) {
        if (!current || current.lines.length === 0)
          throw parseError(`"${END_OF_FILE}" must follow a hunk's lines.`, i + 1, line);
        current.endOfFile = true;
        continue;
      }
      break;
    }
    if (line === "@@" || line.startsWith("@@ ")) {
      const header = line.slice(2).trim();
      current = { header: header.length > 0 ? header : undefined, lines: [], endOfFile: false, patchLine: i + 1 };
      hunks.push(current);
      continue;
    }
    const op = line[0];
    if (!current) {
      // The first hunk of a file may leave out its "@@" line.
      current = { header: undefined, lines: [], endOfFile: false, patchLine: i + 1 };
      hunks.push(current);
    }
    if (op === " " || op === "-" || op === "+") current.lines.push({ op, text: line.slice(1) });
    // An empty line inside a hunk is an empty context line whose leading space got lost on the way.
    else if (line === "") current.lines.push({ op: " ", text: "", bare: true });
    else throw parseError(`hunk lines start with " " (context), "-" (remove) or "+" (add).`, i + 1, line);
  }
  // Blank lines that merely separate operations are not context.
  for (const hunk of hunks) while (hunk.lines.length > 0 && hunk.lines[hunk.lines.length - 1]!.bare) hunk.lines.pop();
  const empty = hunks.find((h) => h.lines.length === 0);
  if (empty) throw parseError("a hunk needs at least one line.", empty.patchLine);
  return { hunks, next: i };
}
