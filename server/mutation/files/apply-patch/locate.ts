// Finds where each hunk of an Update applies, in order, before anything is written: an exact match first,
// then tolerant passes (trailing whitespace, then all surrounding/inner whitespace) that are reported per hunk.
import type { Hunk } from "./parse.js";

export type MatchKind = "exact" | "trailing_whitespace" | "whitespace";

export interface LocatedHunk {
  hunk: Hunk;
  /** 0-based index of the first old line in the file. */
  start: number;
  /** Number of file lines the hunk replaces. */
  length: number;
  match: MatchKind;
}

export type LocateOutcome = { ok: true; located: LocatedHunk[] } | { ok: false; hunkIndex: number; reason: string };

const PASSES: Array<{ kind: MatchKind; norm: (s: string) => string }> = [
  { kind: "exact", norm: (s) => s },
  { kind: "trailing_whitespace", norm: (s) => s.trimEnd() },
  { kind: "whitespace", norm: (s) => s.trim().replace(/\s+/g, " ") },
];

export function locateHunks(lines: string[], hunks: Hunk[]): LocateOutcome {
  const located: LocatedHunk[] = [];
  let cursor = 0;
  for (const [index, hunk] of hunks.entries()) {
    let from = cursor;
    if (hunk.header !== undefined) {
      const at = findSequence(lines, [hunk.header], from, false);
      if (!at)
        return {
          ok: false,
          hunkIndex: index,
          reason: `its "@@ ${hunk.header}" context line was not found after line ${from}`,
        };
      from = at.start + 1;
    }
    const old = hunk.lines.filter((l) => l.op !== "+").map((l) => l.text);
    if (old.length === 0) {
      // A hunk that only adds lines goes after its @@ context line, or at the end of the file.
      const start = hunk.header !== undefined ? from : lines.length;
      located.push({ hunk, start, length: 0, match: "exact" });
      cursor = start;
      continue;
    }
    const found = findSequence(lines, old, from, hunk.endOfFile);
    if (!found) {
      return {
        ok: false,
        hunkIndex: index,
        reason: `its ${old.length} context/removed line(s) starting "${old[0]!.slice(0, 60)}" were not found${from > 0 ? ` after line ${from}` : ""}${hunk.endOfFile ? " at the end of the file" : ""}, even ignoring whitespace`,
      };
    }
    located.push({ hunk, start: found.start, length: old.length, match: found.match });
    cursor = found.start + old.length;
  }
  return { ok: true, located };
}

/** First position at or after `from` where `wanted` matches, trying each pass in turn. */
function findSequence(
  lines: string[],
  wanted: string[],
  from: number,
  atEnd: boolean,
): { start: number; match: MatchKind } | undefined {
  for (const pass of PASSES) {
    const target = wanted.map(pass.norm);
    const matchesAt = (start: number) => target.every((w, j) => pass.norm(lines[start + j]!) === w);
    if (atEnd) {
      const start = lines.length - wanted.length;
      if (start >= from && matchesAt(start)) return { start, match: pass.kind };
      continue;
    }
    for (let start = from; start + wanted.length <= lines.length; start++) {
      if (matchesAt(start)) return { start, match: pass.kind };
    }
  }
  return undefined;
}
