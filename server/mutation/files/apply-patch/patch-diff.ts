// The unified diff an /a answer carries: each added, updated or moved file's diff (edit-diff.ts, clipped per
// file), joined in patch order and bounded in total; what does not fit is named in a closing note. Computed
// at planning, from the text before and the text planned, so it is known before the first rename.
import { MAX_DIFF_CHARS, type FileDiff } from "../edit-diff.js";

/** Most characters of a patch's whole diff (every file's together). */
export const MAX_PATCH_DIFF_CHARS = MAX_DIFF_CHARS;

export interface PatchDiff {
  diff: string;
  truncated?: true;
}

/** The files' diffs (undefined: no text change to show) as one bounded diff, or undefined when there is none. */
export function patchDiff(files: Array<{ display: string; diff: FileDiff | undefined }>): PatchDiff | undefined {
  const shown: string[] = [];
  const notShown: string[] = [];
  let chars = 0;
  let truncated = false;
  let full = false;
  for (const { display, diff } of files) {
    if (!diff) continue;
    if (diff.truncated) truncated = true;
    if (full) {
      notShown.push(display);
      continue;
    }
    const room = MAX_PATCH_DIFF_CHARS - chars - (shown.length > 0 ? 1 : 0);
    if (diff.diff.length <= room) {
      chars += diff.diff.length + (shown.length > 0 ? 1 : 0);
      shown.push(diff.diff);
      continue;
    }
    // The first file that does not fit shows the whole lines that do, beyond its two header lines, then all stop.
    full = true;
    truncated = true;
    const kept: string[] = [];
    let used = 0;
    for (const line of diff.diff.split("\n")) {
      if (used + line.length + 1 > room) break;
      kept.push(line);
      used += line.length + 1;
    }
    if (kept.length > 2) shown.push(`${kept.join("\n")}\n… the rest of ${display}'s diff not shown.`);
    else notShown.push(display);
  }
  if (shown.length === 0 && notShown.length === 0) return undefined;
  const listed = `${notShown.slice(0, 5).join(", ")}${notShown.length > 5 ? ", …" : ""}`;
  const note =
    notShown.length > 0
      ? [`… diffs of ${notShown.length} more file(s) not shown (${listed}); read them to see the change.`]
      : [];
  return { diff: [...shown, ...note].join("\n"), ...(truncated ? { truncated: true as const } : {}) };
}
