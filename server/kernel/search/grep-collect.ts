// What both /g engines feed their matches into: one ordering, one set of bounds and one way of showing a
// line, so the engine in use can never change the answer.
import { z } from "zod";
import { GREP_WINDOW_LEAD_CHARS, MAX_GREP_LINE_CHARS } from "../limits.js";
import { compareNames } from "./walk.js";

/** One matching line as /g answers it (part of the grep tool's output schema in grep.ts). */
export const grepLine = z.strictObject({
  line: z
    .number()
    .int()
    .min(1)
    .describe("1-based line number, the same numbering /r uses (read around it with /r offset=)."),
  text: z
    .string()
    .describe(
      `The line without its newline; a line over ${MAX_GREP_LINE_CHARS} characters is shown as a window around its first match, with … where cut.`,
    ),
  col: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe("1-based character column of the first match; only given when the line is shown as a window."),
  clipped: z.literal(true).optional().describe("Present when the line was longer than the window shown."),
});

export type GrepLine = z.infer<typeof grepLine>;

export interface GrepFile {
  /** Path relative to the project root. */
  relative: string;
  lines: GrepLine[];
}

export type GrepStop = "matches" | "bytes" | "time";

/**
 * A matching line longer than this (or rg's JSON event for it) is not held in memory: its file is named in
 * `skipped` (reason long_line) instead. Far above any source line; it bounds what one line can cost the bridge.
 */
export const MAX_MATCHING_LINE_BYTES = 16 * 1024 * 1024;

/** Why a file that holds a match shows no lines: its content is binary, or a matching line is too long to carry. */
export type SkipReason = "binary" | "long_line";

export interface SkippedFile {
  relative: string;
  reason: SkipReason;
}

export interface GrepLimits {
  maxMatches: number;
  maxBytes: number;
}

/** Shows a line whole, or a window around its first match when it is too long to be useful whole. */
export function presentLine(line: number, text: string, firstMatchCodeUnit: number): GrepLine {
  const chars = Array.from(text);
  if (chars.length <= MAX_GREP_LINE_CHARS) return { line, text };
  const col = Array.from(text.slice(0, firstMatchCodeUnit)).length + 1;
  const from = Math.max(0, Math.min(col - 1 - GREP_WINDOW_LEAD_CHARS, chars.length - MAX_GREP_LINE_CHARS));
  const window = chars.slice(from, from + MAX_GREP_LINE_CHARS).join("");
  return {
    line,
    text: `${from > 0 ? "…" : ""}${window}${from + MAX_GREP_LINE_CHARS < chars.length ? "…" : ""}`,
    col,
    clipped: true,
  };
}

/** Walk order of two root-relative paths: component by component, names in byte order (rg's --sort=path). */
export function comparePaths(a: string, b: string): number {
  const x = a.split("/");
  const y = b.split("/");
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) {
    const order = compareNames(x[i]!, y[i]!);
    if (order !== 0) return order;
  }
  return x.length - y.length;
}

export class MatchCollector {
  readonly files: GrepFile[] = [];
  /** Files with a match that show no lines, in path order (only those before the bound, when one was hit). */
  readonly skipped: SkippedFile[] = [];
  matchedLines = 0;
  bytes = 0;
  stop: GrepStop | undefined;

  constructor(readonly limits: GrepLimits) {}

  get full(): boolean {
    return this.stop !== undefined;
  }

  /** Adds one file's matching lines in line order; returns false once a bound is reached. */
  addFile(relative: string, lines: GrepLine[]): boolean {
    if (this.stop || lines.length === 0) return !this.stop;
    const kept: GrepLine[] = [];
    for (const line of lines) {
      if (this.matchedLines >= this.limits.maxMatches) {
        this.stop = "matches";
        break;
      }
      const cost = Buffer.byteLength(line.text, "utf8") + Buffer.byteLength(relative, "utf8") / lines.length + 16;
      if (this.bytes + cost > this.limits.maxBytes && this.matchedLines > 0) {
        this.stop = "bytes";
        break;
      }
      kept.push(line);
      this.matchedLines++;
      this.bytes += cost;
    }
    if (kept.length > 0) this.files.push({ relative, lines: kept });
    return !this.stop;
  }

  /** Names a file that holds a match but shows no lines; ignored once a bound is reached (it lies past it). */
  addSkipped(relative: string, reason: SkipReason): boolean {
    if (!this.stop) this.skipped.push({ relative, reason });
    return !this.stop;
  }

  timeUp(): void {
    this.stop ??= "time";
  }
}

type Entry =
  | { relative: string; lines: GrepLine[]; skipped?: undefined }
  | { relative: string; lines?: undefined; skipped: SkipReason };

/** Above this many held lines, files that sort past the bound are dropped (see OrderedFiles.prune). */
const PRUNE_FACTOR = 2;

/**
 * Files in whatever order a parallel search finds them, handed to the collector in path order at the end, so
 * that the answer is the same as a sorted search's. Memory stays bounded: once more lines are held than the
 * collector can take, the files past the point where it would fill are dropped, and later files that sort
 * past that point are refused outright (`wants` says so before their lines are parsed).
 */
export class OrderedFiles {
  private entries: Entry[] = [];
  private held = 0;
  /** Files sorting after this path cannot reach the answer. */
  private cutoff: string | undefined;

  constructor(readonly limits: GrepLimits) {}

  /** Whether a file at this path could still reach the answer. */
  wants(relative: string): boolean {
    return this.cutoff === undefined || comparePaths(relative, this.cutoff) <= 0;
  }

  add(relative: string, lines: GrepLine[]): void {
    if (lines.length === 0 || !this.wants(relative)) return;
    this.entries.push({ relative, lines });
    this.held += lines.length;
    if (this.held > PRUNE_FACTOR * this.limits.maxMatches) this.prune();
  }

  addSkipped(relative: string, reason: SkipReason): void {
    if (this.wants(relative)) this.entries.push({ relative, skipped: reason });
  }

  /** Feeds the collector in path order. */
  drainInto(collector: MatchCollector): void {
    this.entries.sort((a, b) => comparePaths(a.relative, b.relative));
    for (const entry of this.entries) {
      const more = entry.skipped
        ? collector.addSkipped(entry.relative, entry.skipped)
        : collector.addFile(entry.relative, entry.lines);
      if (!more) break;
    }
  }

  /** Keeps the files a collector would take, in path order, and remembers where it filled. */
  private prune(): void {
    const trial = new MatchCollector(this.limits);
    this.entries.sort((a, b) => comparePaths(a.relative, b.relative));
    let kept = 0;
    for (const entry of this.entries) {
      kept++;
      const more = entry.skipped
        ? trial.addSkipped(entry.relative, entry.skipped)
        : trial.addFile(entry.relative, entry.lines);
      if (!more) {
        this.cutoff = entry.relative;
        break;
      }
    }
    this.entries = this.entries.slice(0, kept);
    this.held = this.entries.reduce((n, e) => n + (e.lines?.length ?? 0), 0);
  }
}
