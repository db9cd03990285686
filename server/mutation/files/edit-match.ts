// Where edit's old text is in a file: exact first, then a chain of tolerant strategies in the spirit of
// OpenCode's replacers (indentation-flexible, line-trimmed, whitespace-normalised, block anchors). A strategy
// decides as soon as it finds anything: one span is the match, several are an ambiguity, so a looser strategy
// is used only when it yields exactly one place. All text here is newline-normalised ("\n").
import { diffArrays } from "diff";
import { findOccurrences } from "./text-match.js";

export const MATCH_STRATEGIES = [
  "exact",
  "indentation-flexible",
  "line-trimmed",
  "whitespace-normalized",
  "block-anchor",
] as const;
export type MatchStrategy = (typeof MATCH_STRATEGIES)[number];

/** A matched span of the normalised text: [start, end). */
export interface MatchSpan {
  start: number;
  end: number;
}

export interface EditMatch {
  strategy: MatchStrategy;
  /** Every span the deciding strategy found (one, unless ambiguous or exact under replaceAll), capped at `limit`. */
  spans: MatchSpan[];
  /** The spans are whole lines found by a tolerant strategy: new is re-indented to them (reindent). */
  wholeLines: boolean;
}

/** Tolerant strategies are skipped for texts longer than this (the exact search still runs): they split and scan every line on the event loop (~0.1 s at this size). */
export const MAX_TOLERANT_TEXT_CHARS = 2 * 1024 * 1024;
/** Block anchors: old must span at least this many lines, and the middle lines must be this similar (0..1). */
const MIN_ANCHOR_LINES = 3;
const MIN_ANCHOR_SIMILARITY = 0.5;
/**
 * Line comparisons (and block-anchor alignment steps) the tolerant chain may spend on one edit: a file of equal
 * lines and an old of thousands of them would otherwise cost lines x old lines on the event loop. Spent, the
 * chain stops and the edit answers edit_no_match, as when nothing was found.
 */
export const MAX_TOLERANT_STEPS = 4_000_000;

/** What is left of MAX_TOLERANT_STEPS for one edit; `spend` answers false once it is gone. */
class StepBudget {
  private left = MAX_TOLERANT_STEPS;
  spend(steps: number): boolean {
    this.left -= steps;
    return this.left >= 0;
  }
  get spent(): boolean {
    return this.left < 0;
  }
}

/**
 * The deciding strategy and its spans, or undefined when no strategy finds old. `all` (replaceAll) takes every
 * exact occurrence, non-overlapping; tolerant strategies still need a unique match.
 */
export function locateOld(text: string, old: string, options: { all: boolean; limit: number }): EditMatch | undefined {
  const exact = options.all
    ? nonOverlapping(text, old)
    : findOccurrences(text, old, options.limit).map((at) => ({ start: at, end: at + old.length }));
  if (exact.length > 0) return { strategy: "exact", spans: exact, wholeLines: false };
  if (text.length > MAX_TOLERANT_TEXT_CHARS || old.trim().length === 0) return undefined;
  const lines = indexLines(text);
  const want = oldLines(old);
  const indent = commonIndent(want.lines);
  const budget = new StepBudget();
  const strategies: Array<[MatchStrategy, () => MatchSpan[]]> = [
    ["indentation-flexible", () => lineWindows(lines, want, () => sameDedented(indent), budget)],
    ["line-trimmed", () => lineWindows(lines, want, () => (a, b) => a.trim() === b.trim(), budget)],
    ["whitespace-normalized", () => whitespaceNormalized(text, lines, want, budget)],
    ["block-anchor", () => blockAnchor(lines, want, budget)],
  ];
  for (const [strategy, find] of strategies) {
    const spans = find();
    if (budget.spent) return undefined;
    // Every tolerant strategy but the one-line whitespace search matches whole lines.
    const wholeLines = !(strategy === "whitespace-normalized" && want.lines.length === 1);
    if (spans.length > 0) return { strategy, spans: spans.slice(0, options.limit), wholeLines };
  }
  return undefined;
}

/**
 * new re-indented for whole lines a tolerant strategy matched: when every non-blank line of new starts with old's
 * common indentation, that indentation becomes the matched lines' own, so new lands at the file's depth (an
 * agent whose old drifted in indentation wrote new with the same drift).
 */
export function reindent(replacement: string, old: string, matched: string): string {
  const from = commonIndent(oldLines(old).lines);
  const to = commonIndent(matched.split("\n"));
  if (from === to) return replacement;
  const lines = replacement.split("\n");
  if (!lines.every((l) => l.trim() === "" || l.startsWith(from))) return replacement;
  return lines.map((l) => (l.trim() === "" ? l : to + l.slice(from.length))).join("\n");
}

function nonOverlapping(text: string, old: string): MatchSpan[] {
  const spans: MatchSpan[] = [];
  for (let at = text.indexOf(old); at !== -1; at = text.indexOf(old, at + old.length))
    spans.push({ start: at, end: at + old.length });
  return spans;
}

interface IndexedLines {
  lines: string[];
  /** starts[i]: offset of line i; starts[lines.length]: text.length + 1 (as if a newline followed the last line). */
  starts: number[];
}

function indexLines(text: string): IndexedLines {
  const lines = text.split("\n");
  const starts: number[] = [0];
  for (const line of lines) starts.push(starts[starts.length - 1]! + line.length + 1);
  return { lines, starts };
}

interface OldLines {
  lines: string[];
  /** old ended with "\n": the matched span takes the newline after its last line too. */
  trailingNewline: boolean;
}

function oldLines(old: string): OldLines {
  const trailingNewline = old.endsWith("\n");
  return { lines: (trailingNewline ? old.slice(0, -1) : old).split("\n"), trailingNewline };
}

/** The span of whole lines [first, first + count), with the following newline when old ended with one. */
function spanOf(index: IndexedLines, first: number, count: number, trailingNewline: boolean): MatchSpan {
  const last = first + count - 1;
  const textEnd = index.starts[index.lines.length]! - 1;
  const end = index.starts[last + 1]! - 1 + (trailingNewline ? 1 : 0);
  return { start: index.starts[first]!, end: Math.min(end, textEnd) };
}

type LineComparison = (fileLine: string, oldLine: string) => boolean;

/** Windows of whole lines where every line pair satisfies the comparison `compare()` makes for that window. */
function lineWindows(
  index: IndexedLines,
  want: OldLines,
  compare: () => LineComparison,
  budget: StepBudget,
): MatchSpan[] {
  const n = want.lines.length;
  const spans: MatchSpan[] = [];
  for (let i = 0; i + n <= index.lines.length; i++) {
    const same = compare();
    let j = 0;
    while (j < n && same(index.lines[i + j]!, want.lines[j]!)) j++;
    if (!budget.spend(j + 1)) return [];
    if (j === n && (n > 1 || want.lines[0]!.trim() !== "")) spans.push(spanOf(index, i, n, want.trailingNewline));
  }
  return spans;
}

/**
 * One window's comparison for indentation-flexible: old's lines less their common indentation, each under one
 * and the same file indentation, which the window's first non-blank line fixes. Blank lines match blank lines.
 */
function sameDedented(indent: string): LineComparison {
  let fileIndent: string | undefined;
  return (fileLine, oldLine) => {
    if (oldLine.trim() === "") return fileLine.trim() === "";
    const rest = oldLine.slice(indent.length);
    if (fileIndent === undefined) {
      if (!fileLine.endsWith(rest)) return false;
      const prefix = fileLine.slice(0, fileLine.length - rest.length);
      if (prefix.trim() !== "") return false;
      fileIndent = prefix;
      return true;
    }
    return fileLine === fileIndent + rest;
  };
}

function commonIndent(lines: string[]): string {
  let common: string | undefined;
  for (const line of lines) {
    if (line.trim() === "") continue;
    const indent = /^[ \t]*/.exec(line)![0];
    if (common === undefined) common = indent;
    else {
      let k = 0;
      while (k < common.length && k < indent.length && common[k] === indent[k]) k++;
      common = common.slice(0, k);
    }
  }
  return common ?? "";
}

const collapse = (line: string) => line.trim().replace(/\s+/g, " ");

/**
 * Runs of spaces and tabs count as one: a one-line old is found inside lines (each whitespace run of old matching
 * any run), a longer old as whole lines compared collapsed. The one-line search finds old's first word with
 * indexOf and checks the rest word by word (no regular expression built from agent text), within the budget.
 */
function whitespaceNormalized(text: string, index: IndexedLines, want: OldLines, budget: StepBudget): MatchSpan[] {
  if (want.lines.length > 1) return lineWindows(index, want, () => (a, b) => collapse(a) === collapse(b), budget);
  const words = want.lines[0]!.trim().split(/[ \t]+/);
  if (words.length < 2) return [];
  const spans: MatchSpan[] = [];
  for (let at = text.indexOf(words[0]!); at !== -1; at = text.indexOf(words[0]!, at + 1)) {
    let q = at + words[0]!.length;
    let w = 1;
    for (; w < words.length; w++) {
      const gap = q;
      while (q < text.length && (text.charCodeAt(q) === 32 || text.charCodeAt(q) === 9)) q++;
      if (q === gap || !text.startsWith(words[w]!, q)) break;
      q += words[w]!.length;
    }
    if (!budget.spend(w)) return [];
    if (w === words.length) spans.push({ start: at, end: q });
  }
  return spans;
}

/**
 * Block anchors: first and last lines of old match (trimmed), the block is about as long as old, and its middle
 * lines are mostly old's middle lines (LCS of trimmed lines over the longer side, at least MIN_ANCHOR_SIMILARITY).
 */
function blockAnchor(index: IndexedLines, want: OldLines, budget: StepBudget): MatchSpan[] {
  const n = want.lines.length;
  if (n < MIN_ANCHOR_LINES) return [];
  const first = want.lines[0]!.trim();
  const last = want.lines[n - 1]!.trim();
  if (first === "" || last === "") return [];
  const slack = Math.max(2, Math.ceil(n / 4));
  const middle = want.lines.slice(1, -1).map((l) => l.trim());
  const spans: MatchSpan[] = [];
  for (let i = 0; i < index.lines.length; i++) {
    if (index.lines[i]!.trim() !== first) continue;
    for (let end = i + Math.max(2, n - 1 - slack); end <= Math.min(index.lines.length - 1, i + n - 1 + slack); end++) {
      if (index.lines[end]!.trim() !== last) continue;
      const block = index.lines.slice(i + 1, end).map((l) => l.trim());
      if (!budget.spend(block.length + middle.length)) return [];
      if (similar(block, middle, budget)) {
        spans.push(spanOf(index, i, end - i + 1, want.trailingNewline));
        break;
      }
    }
  }
  return spans;
}

/**
 * Whether the longest common subsequence of two line lists covers at least MIN_ANCHOR_SIMILARITY of the longer:
 * jsdiff's diffArrays, stopped at the edit distance beyond which that cannot hold (its cost is bounded by it).
 */
function similar(a: string[], b: string[], budget: StepBudget): boolean {
  const longer = Math.max(a.length, b.length);
  if (longer === 0) return true;
  const needed = Math.ceil(longer * MIN_ANCHOR_SIMILARITY);
  const maxEditLength = a.length + b.length - 2 * needed;
  if (maxEditLength < 0) return false;
  if (!budget.spend(longer * (maxEditLength + 1))) return false;
  const parts = diffArrays(a, b, { maxEditLength });
  if (!parts) return false;
  let common = 0;
  for (const part of parts) if (!part.added && !part.removed) common += part.count ?? part.value.length;
  return common >= needed;
}
