// Read URLs for exactly the unseen parts of a file: read coverage counts disk bytes, /r selects lines, so each
// unseen byte range becomes the whole lines that hold it (offset/limit), never a re-read of the whole file.
import type { ToolContext } from "../../kernel/tool/definition.js";
import { decodeLossy, diskOffsetOf, indexLines, type TextFile } from "../../text/index.js";

export interface UnseenLines {
  /** 1-based first and last line holding unseen bytes. */
  from: number;
  to: number;
  /** /r of exactly those lines (limit omitted when they run to the end of the file). */
  read: string;
}

/** One entry per unseen byte range (merged when two fall on the same lines); empty for a file /r shows as binary. */
export function unseenLineReads(
  ctx: ToolContext,
  display: string,
  bytes: Buffer,
  ranges: Array<[number, number]>,
): UnseenLines[] {
  const file = decodeLossy(bytes);
  if (file.kind === "binary" || ranges.length === 0) return [];
  const starts = indexLines(file.utf8).starts;
  if (starts.length === 0) return [];
  const lineOf = lineFinder(file, starts);
  const out: Array<{ from: number; to: number }> = [];
  for (const [start, end] of ranges) {
    const from = lineOf(start);
    const to = lineOf(Math.max(start, end - 1));
    const last = out[out.length - 1];
    if (last && from <= last.to + 1) last.to = Math.max(last.to, to);
    else out.push({ from, to });
  }
  return out.map(({ from, to }) => ({
    from,
    to,
    read: ctx.urls.to("r", "r", [
      ["path", display],
      ...(from > 1 ? [["offset", from] as [string, number]] : []),
      ...(to < starts.length ? [["limit", to - from + 1] as [string, number]] : []),
    ]),
  }));
}

/** The 1-based line holding a disk byte offset: a binary search over the lines' disk starts. */
function lineFinder(file: TextFile, starts: number[]): (diskOffset: number) => number {
  const diskStart = (line: number) => (line === 0 ? 0 : diskOffsetOf(file, starts[line]!));
  return (offset) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (diskStart(mid) <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
}
