// What both /g engines feed their matches into: one ordering, one set of bounds and one way of showing a
// line, so the engine in use can never change the answer.
import { z } from "zod";
import { GREP_WINDOW_LEAD_CHARS, MAX_GREP_LINE_CHARS } from "../limits.js";

/** One matching line as /g answers it (part of the grep tool's output schema in grep.ts). */
export const grepLine = z.strictObject({
  line: z.number().int().min(1).describe("1-based line number, the same numbering /r uses (read around it with /r offset=)."),
  text: z.string().describe(`The line without its newline; a line over ${MAX_GREP_LINE_CHARS} characters is shown as a window around its first match, with … where cut.`),
  col: z.number().int().min(1).optional().describe("1-based character column of the first match; only given when the line is shown as a window."),
  clipped: z.literal(true).optional().describe("Present when the line was longer than the window shown."),
});

export type GrepLine = z.infer<typeof grepLine>;

export interface GrepFile {
  /** Path relative to the project root. */
  relative: string;
  lines: GrepLine[];
}

export type GrepStop = "matches" | "bytes" | "time";

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
  return { line, text: `${from > 0 ? "…" : ""}${window}${from + MAX_GREP_LINE_CHARS < chars.length ? "…" : ""}`, col, clipped: true };
}

export class MatchCollector {
  readonly files: GrepFile[] = [];
  matchedLines = 0;
  bytes = 0;
  stop: GrepStop | undefined;

  constructor(private readonly limits: GrepLimits) {}

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

  timeUp(): void {
    this.stop ??= "time";
  }
}
