// The unified diff a file change answers, from jsdiff over the decoded bytes before and after (newlines seen
// as "\n"), bounded: the unchanged head and tail are cut before diffing, and the text is clipped with a note.
import { structuredPatch } from "diff";

const CONTEXT_LINES = 3;
/** Most diff body lines shown, and most characters of the whole diff text. */
export const MAX_DIFF_LINES = 200;
export const MAX_DIFF_CHARS = 16 * 1024;
/** Beyond this many changed lines jsdiff gives up (its maxEditLength) and the answer says the diff was too large. */
const MAX_EDIT_LENGTH = 20_000;

export interface FileDiff {
  /** A unified diff (---/+++ headers, @@ hunks); clipped to the bounds above with a closing note. */
  diff: string;
  /** Present when diff was clipped or not computed. */
  truncated?: true;
}

/** The unified diff from `before` to `after` (both newline-normalised), line numbers of the whole file. */
export function unifiedDiff(display: string, before: string, after: string): FileDiff | undefined {
  if (before === after) return undefined;
  const a = before.split("\n");
  const b = after.split("\n");
  // Unchanged head and tail are cut (keeping context) so the diff costs what changed, not the file's size.
  let head = 0;
  while (head < a.length - 1 && head < b.length - 1 && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head - 1 && tail < b.length - head - 1 && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const skip = Math.max(0, head - CONTEXT_LINES);
  const keepTail = Math.max(0, tail - CONTEXT_LINES);
  const slice = (lines: string[]) => lines.slice(skip, lines.length - keepTail).join("\n");
  const header = [`--- ${display}`, `+++ ${display}`];
  const patch = structuredPatch(display, display, slice(a), slice(b), undefined, undefined, { context: CONTEXT_LINES, maxEditLength: MAX_EDIT_LENGTH });
  if (!patch) return { diff: [...header, `(the change spans more than ${MAX_EDIT_LENGTH} lines; read the file to see it)`].join("\n"), truncated: true };
  // A cut tail means the sliced texts do not end where the files do: jsdiff's "No newline" marker is about the slice.
  const body: string[] = [];
  for (const hunk of patch.hunks) {
    body.push(`@@ -${range(hunk.oldStart + skip, hunk.oldLines)} +${range(hunk.newStart + skip, hunk.newLines)} @@`);
    for (const line of hunk.lines) if (!(keepTail > 0 && line.startsWith("\\"))) body.push(line);
  }
  return clipped(header, body);
}

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
  return { diff: [...header, ...shown, `… ${body.length - shown.length} more diff lines not shown; read the file to see the rest of the change.`].join("\n"), truncated: true };
}
