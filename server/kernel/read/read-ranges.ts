// Per-path line ranges of a multi-read: lines= repeats, and its n-th value is the range of the n-th path=.
// A separate parameter rather than a suffix on path=, because a file name may contain any byte but NUL and
// "/" (a:10-20 and a#L10 are real names), so no suffix could be told apart from a name.
import { ErrorCode, ToolError } from "../../errors.js";
import { MAX_READ_LINE_LIMIT } from "../limits.js";
import type { RangeRequest } from "./read-target.js";

/** FROM-TO, FROM- (to the end) or FROM:COL-[TO] (continuing a split line); numbers are 1-based and inclusive. */
const LINE_SPAN = /^(\d{1,9})(?::(\d{1,9}))?-(\d{1,9})?$/;
// The separators the lines= synonym repair accepted before lines= was a parameter (bind.ts), answered with a repair.
// (Written so that no two whitespace runs are adjacent: `\s*(?:…|\s)\s*` backtracked cubically on a long run.)
const OTHER_SPAN = /^(\d{1,9})(?:\s*(?:,|\.\.|:)\s*|\s+)(\d{1,9})$/;

export interface PathRange {
  path: string;
  range: RangeRequest;
}

/** What a lines= value means, or undefined when it is not one of the three forms. */
export function parseLineSpan(value: string): RangeRequest | undefined {
  const m = LINE_SPAN.exec(value.trim());
  if (!m) return undefined;
  const offset = Number(m[1]);
  const col = m[2] === undefined ? 1 : Number(m[2]);
  const to = m[3] === undefined ? undefined : Number(m[3]);
  if (offset < 1 || col < 1 || offset > MAX_READ_LINE_LIMIT || col > MAX_READ_LINE_LIMIT) return undefined;
  if (to !== undefined && (to < offset || to - offset + 1 > MAX_READ_LINE_LIMIT)) return undefined;
  return { offset, col, limit: to === undefined ? undefined : to - offset + 1 };
}

/** The lines= value of a range: the inverse of parseLineSpan. */
export function formatLineSpan(range: RangeRequest): string {
  const from = range.col === 1 ? `${range.offset}` : `${range.offset}:${range.col}`;
  return `${from}-${range.limit === undefined ? "" : range.offset + range.limit - 1}`;
}

export interface PairOptions {
  paths: string[];
  lines: string[] | undefined;
  /** The one range offset/limit/col give, used for every path when lines= is absent. */
  shared: RangeRequest;
  /** Whether offset, limit or col was given explicitly alongside lines=. */
  sharedGiven: boolean;
  /** Exact /r URL for a list of path/range pairs (for the repair of a misspelled range). */
  urlFor: (pairs: PathRange[]) => string;
}

/** Pairs each path with its range; throws a ToolError naming the fix when lines= does not pair up. */
export function pairRanges({ paths, lines, shared, sharedGiven, urlFor }: PairOptions): PathRange[] {
  if (lines === undefined) return paths.map((path) => ({ path, range: shared }));
  if (sharedGiven) {
    throw new ToolError(
      ErrorCode.conflictingParameters,
      "lines= gives each path its own range; offset=, limit= and col= give one range to all. Use one form.",
      {
        detail: { parameters: ["lines", "offset", "limit", "col"] },
      },
    );
  }
  if (lines.length !== paths.length) {
    throw new ToolError(
      ErrorCode.invalidParameter,
      `lines= pairs with path= by position, so give one per path: ${paths.length} path= but ${lines.length} lines=. Use lines=1- for a whole file.`,
      { detail: { parameter: "lines", paths: paths.length, lines: lines.length } },
    );
  }
  const ranges = lines.map(parseLineSpan);
  const bad = ranges.findIndex((r) => r === undefined);
  if (bad === -1) return paths.map((path, i) => ({ path, range: ranges[i]! }));
  const other = OTHER_SPAN.exec(lines[bad]!.trim());
  const from = other ? Number(other[1]) : 0;
  const to = other ? Number(other[2]) : 0;
  // Repaired only when this is the one range at fault: the repair must succeed as returned.
  const fixable = other !== null && from >= 1 && to >= from && ranges.every((r, i) => r !== undefined || i === bad);
  const repaired = fixable
    ? urlFor(
        paths.map((path, i) => ({
          path,
          range: i === bad ? { offset: from, col: 1, limit: to - from + 1 } : ranges[i]!,
        })),
      )
    : undefined;
  throw new ToolError(
    ErrorCode.invalidParameter,
    `lines=${lines[bad]} is not a line range: write FROM-TO (lines=10-40) or FROM- (to the end), 1-based and inclusive.${fixable ? " Fetch the repair URL." : ""}`,
    { detail: { parameter: "lines", value: lines[bad] }, ...(repaired ? { repair: repaired } : {}) },
  );
}
