// The unified diff a file change answers: jsdiff (structuredPatch) over the decoded content before and after
// (newlines seen as "\n"), run only over the lines each change touched plus context, so its cost follows
// the change, not the file; the text is clipped with a note.
import { structuredPatch } from "diff";

const CONTEXT_LINES = 3;
/** Most diff body lines shown, and most characters of the whole diff text. */
export const MAX_DIFF_LINES = 200;
export const MAX_DIFF_CHARS = 16 * 1024;
/** jsdiff's bounds for one region (changed lines, milliseconds); beyond them the region shows as removed then added. */
const MAX_EDIT_LENGTH = 1000;
const MAX_REGION_DIFF_MS = 100;

/** The lines one change touched: 0-based [start, end) line indexes, before and after. */
export interface ChangedLines {
  before: [number, number];
  after: [number, number];
}

export interface FileDiff {
  /** A unified diff (---/+++ headers, @@ hunks); clipped to the bounds above with a closing note. */
  diff: string;
  /** Present when diff was clipped. */
  truncated?: true;
}

interface Side {
  lines: string[];
  /** Lines in the file (a final newline ends the last line; it does not start an empty one). */
  count: number;
  finalNewline: boolean;
}

function sideOf(text: string): Side {
  const lines = text.split("\n");
  const finalNewline = text.endsWith("\n") || text === "";
  return { lines, count: finalNewline ? lines.length - 1 : lines.length, finalNewline };
}

/** Lines [from, to) as text, with their newlines (none after the file's last line when it has none). */
function textOf(side: Side, from: number, to: number): string {
  if (to <= from) return "";
  const body = side.lines.slice(from, to).join("\n");
  return to === side.count && !side.finalNewline ? body : `${body}\n`;
}

/** The unified diff from `before` to `after` (newline-normalised) over the touched lines `changes` names. */
export function unifiedDiff(
  display: string,
  before: string,
  after: string,
  changes: ChangedLines[],
  from = display,
): FileDiff | undefined {
  if (before === after || changes.length === 0) return undefined;
  const a = sideOf(before);
  const b = sideOf(after);
  const body: string[] = [];
  for (const group of mergeNear(changes, a, b)) {
    const aFrom = Math.max(0, group.before[0] - CONTEXT_LINES);
    const bFrom = group.after[0] - (group.before[0] - aFrom);
    const aTo = Math.min(a.count, group.before[1] + CONTEXT_LINES);
    const bTo = Math.min(b.count, group.after[1] + (aTo - group.before[1]));
    const oldText = textOf(a, aFrom, aTo);
    const newText = textOf(b, bFrom, bTo);
    const patch = structuredPatch(display, display, oldText, newText, undefined, undefined, {
      context: CONTEXT_LINES,
      maxEditLength: MAX_EDIT_LENGTH,
      timeout: MAX_REGION_DIFF_MS,
    });
    if (!patch) {
      // Too many changed lines to align: still the true change, as every old line removed, then every new one added.
      body.push(
        `@@ -${range(aFrom + 1, aTo - aFrom)} +${range(bFrom + 1, bTo - bFrom)} @@`,
        ...prefixed("-", oldText),
        ...prefixed("+", newText),
      );
      continue;
    }
    for (const hunk of patch.hunks) {
      body.push(
        `@@ -${range(hunk.oldStart + aFrom, hunk.oldLines)} +${range(hunk.newStart + bFrom, hunk.newLines)} @@`,
        ...hunk.lines,
      );
    }
  }
  return clipped([`--- ${from}`, `+++ ${display}`], body);
}

/**
 * The diff of a whole-file replacement (write, an added or rewritten file): only the lines between the common
 * first and last lines are diffed, so a small change to a large file costs a scan, not an alignment.
 */
export function wholeFileDiff(display: string, before: string, after: string, from = display): FileDiff | undefined {
  if (before === after) return undefined;
  const a = before.split("\n");
  const b = after.split("\n");
  // The common head stops within both files' lines (a final newline does not start a line), as unifiedDiff counts them.
  const lines = Math.min(sideOf(before).count, sideOf(after).count);
  let head = 0;
  while (head < lines && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  return unifiedDiff(
    display,
    before,
    after,
    [{ before: [head, a.length - tail], after: [head, b.length - tail] }],
    from,
  );
}

/** Changes whose context would overlap become one region (in file order), clamped to the files' lines. */
function mergeNear(changes: ChangedLines[], a: Side, b: Side): ChangedLines[] {
  const sorted = [...changes].sort((x, y) => x.before[0] - y.before[0]);
  const merged: ChangedLines[] = [];
  for (const change of sorted) {
    const c: ChangedLines = {
      before: [Math.min(change.before[0], a.count), Math.min(change.before[1], a.count)],
      after: [Math.min(change.after[0], b.count), Math.min(change.after[1], b.count)],
    };
    const last = merged[merged.length - 1];
    if (last && c.before[0] - last.before[1] <= 2 * CONTEXT_LINES) {
      last.before[1] = Math.max(last.before[1], c.before[1]);
      last.after[1] = Math.max(last.after[1], c.after[1]);
    } else merged.push(c);
  }
  return merged;
}

function prefixed(sign: "-" | "+", text: string): string[] {
  if (text === "") return [];
  const lines = text.endsWith("\n") ? text.slice(0, -1).split("\n") : [...text.split("\n")];
  const out = lines.map((l) => `${sign}${l}`);
  if (!text.endsWith("\n")) out.push("\\ No newline at end of file");
  return out;
}

/** A hunk range as unified diff writes it: "start,count", "start" for one line, one less than start for none. */
function range(start: number, count: number): string {
  return count === 1 ? `${start}` : `${count === 0 ? start - 1 : start},${count}`;
}

function clipped(header: string[], body: string[]): FileDiff {
  const shown: string[] = [];
  let chars = header.join("\n").length;
  for (const line of body) {
    if (shown.length >= MAX_DIFF_LINES || chars + line.length + 1 > MAX_DIFF_CHARS) break;
    shown.push(line);
    chars += line.length + 1;
  }
  if (shown.length === body.length) return { diff: [...header, ...shown].join("\n") };
  return {
    diff: [
      ...header,
      ...shown,
      `… ${body.length - shown.length} more diff lines not shown; read the file to see the rest of the change.`,
    ].join("\n"),
    truncated: true,
  };
}
